package dev.fencing.spring.support;

import dev.fencing.annotation.Fenced;
import dev.fencing.spring.EnableFencing;
import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.Handle;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.SpringAsmInfo;
import org.springframework.asm.Type;
import org.springframework.beans.factory.annotation.AnnotatedBeanDefinition;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.core.type.MethodMetadata;
import org.springframework.core.type.classreading.CachingMetadataReaderFactory;
import org.springframework.core.type.classreading.MetadataReader;
import org.springframework.core.type.classreading.MetadataReaderFactory;
import org.springframework.util.ClassUtils;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The resources {@code @Fenced} declares in the class files under the application's packages (those its
 * {@code @ComponentScan}s, {@code @SpringBootApplication} included, scan, and the package of each
 * {@code @EnableFencing} class), read with Spring's ASM metadata so that no class is loaded, which load-time weaving
 * needs. In ASPECTJ mode woven classes need not be beans, so this is how the startup check learns every resource a
 * mode may name; conditions and profiles are ignored (a class that is not a bean is fenced all the same).
 */
final class DeclaredResources {

    private static final String FENCED = Fenced.class.getName();

    private DeclaredResources() {
    }

    /**
     * The application's packages as {@code @ComponentScan} and {@code @EnableFencing} classes name them (the fencing
     * starter's own {@code @EnableFencing} left out).
     */
    static Set<String> packages(ConfigurableListableBeanFactory beanFactory) {
        Set<String> packages = new TreeSet<>();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            Class<?> type = beanFactory.getType(name, false); // initializes no FactoryBean
            if (type == null) {
                continue;
            }
            type = ClassUtils.getUserClass(type);
            MergedAnnotations annotations = MergedAnnotations.from(type);
            for (MergedAnnotation<ComponentScan> scan : annotations.stream(ComponentScan.class).toList()) {
                Set<String> bases = new TreeSet<>(List.of(scan.getStringArray("basePackages")));
                for (Class<?> base : scan.getClassArray("basePackageClasses")) {
                    bases.add(ClassUtils.getPackageName(base));
                }
                packages.addAll(bases.isEmpty() ? Set.of(ClassUtils.getPackageName(type)) : bases);
            }
            // the fencing starter's own @EnableFencing, nested in its auto-configuration, names no application package
            if (annotations.isPresent(EnableFencing.class) && !LazyBeanClasses.isAutoConfiguration(type)) {
                packages.add(ClassUtils.getPackageName(type));
            }
        }
        packages.removeIf(String::isEmpty); // the default package: scanning it would read the whole class path
        return packages;
    }

    /** Whether any class file lies under {@code packageName} (or its subpackages) on {@code classLoader}'s path. */
    static boolean holdsClasses(String packageName, ClassLoader classLoader) {
        try {
            return new PathMatchingResourcePatternResolver(classLoader).getResources("classpath*:"
                    + ClassUtils.convertClassNameToResourcePath(packageName) + "/**/*.class").length > 0;
        } catch (IOException e) {
            return false;
        }
    }

    /** Every resource a {@code @Fenced} on a type or a method declares in the classes under {@code packages}. */
    static Set<String> scan(Collection<String> packages, ClassLoader classLoader) {
        return scan(packages, classLoader, new TreeSet<>());
    }

    /**
     * {@link #scan(Collection, ClassLoader)}, adding to {@code fencedTypes} the name of every class under
     * {@code packages} that carries {@code @Fenced}, or extends or implements (through classes under the packages) a
     * type that does: the classes whose weaving the startup check verifies in ASPECTJ mode, beans or not.
     */
    static Set<String> scan(Collection<String> packages, ClassLoader classLoader, Set<String> fencedTypes) {
        return scan(packages, classLoader, fencedTypes, null);
    }

    /**
     * A lambda or method reference a class under the packages makes for a fenced type: the class, the functional
     * interface (both binary names), and its method's name and erased descriptor.
     */
    record LambdaSite(String creator, String type, String method, String descriptor) {
    }

    /**
     * {@link #scan(Collection, ClassLoader, Set)}, adding to {@code lambdas} (when not {@code null}) each lambda or
     * method reference a class under {@code packages} makes for an interface that carries {@code @Fenced} or extends
     * one that does: no woven code runs for it, whatever the interface declares.
     */
    static Set<String> scan(Collection<String> packages, ClassLoader classLoader, Set<String> fencedTypes,
                            List<LambdaSite> lambdas) {
        List<LambdaSite> sites = new ArrayList<>();
        Map<String, List<String>> supertypes = new HashMap<>();
        ClassPathScanningCandidateComponentProvider scanner = new ClassPathScanningCandidateComponentProvider(false) {
            @Override
            protected boolean isCandidateComponent(MetadataReader reader) {
                AnnotationMetadata metadata = reader.getAnnotationMetadata();
                List<String> supers = new ArrayList<>(List.of(metadata.getInterfaceNames()));
                if (metadata.getSuperClassName() != null) {
                    supers.add(metadata.getSuperClassName());
                }
                supertypes.put(metadata.getClassName(), supers);
                if (lambdas != null) {
                    readLambdas(reader, metadata.getClassName(), sites);
                }
                return metadata.isAnnotated(FENCED) || metadata.hasAnnotatedMethods(FENCED);
            }

            @Override
            protected boolean isCandidateComponent(AnnotatedBeanDefinition definition) {
                return true; // interfaces, abstract and nested classes declare resources too
            }
        };
        scanner.setResourceLoader(new DefaultResourceLoader(classLoader));
        Set<String> resources = new TreeSet<>();
        Set<String> fenced = new HashSet<>();
        for (String base : packages) {
            for (BeanDefinition candidate : scanner.findCandidateComponents(base)) {
                AnnotationMetadata metadata = ((AnnotatedBeanDefinition) candidate).getMetadata();
                fenced.add(metadata.getClassName());
                add(metadata.getAnnotations().get(Fenced.class), resources);
                for (MethodMetadata method : metadata.getAnnotatedMethods(FENCED)) {
                    add(method.getAnnotations().get(Fenced.class), resources);
                }
            }
        }
        // subtypes of fenced types, to a fixpoint: an override that is not annotated again is invisible to weaving;
        // a supertype outside the packages is read from its class file (a library's or another package's base class)
        MetadataReaderFactory readers = new CachingMetadataReaderFactory(classLoader);
        Map<String, Boolean> outside = new HashMap<>();
        boolean grew = true;
        while (grew) {
            grew = false;
            for (Map.Entry<String, List<String>> type : supertypes.entrySet()) {
                if (!fenced.contains(type.getKey()) && type.getValue().stream().anyMatch(
                        superType -> fenced.contains(superType) || !supertypes.containsKey(superType)
                                && fencedOutside(superType, readers, outside))) {
                    fenced.add(type.getKey());
                    grew = true;
                }
            }
        }
        fencedTypes.addAll(fenced);
        if (lambdas != null) {
            for (LambdaSite site : sites) {
                if (fenced.contains(site.type()) || !supertypes.containsKey(site.type())
                        && fencedOutside(site.type(), readers, outside)) {
                    lambdas.add(site);
                }
            }
        }
        return resources;
    }

    /**
     * Adds to {@code sites} each lambda and method reference (LambdaMetafactory) the class {@code reader} read makes.
     */
    private static void readLambdas(MetadataReader reader, String creator, List<LambdaSite> sites) {
        try (InputStream in = reader.getResource().getInputStream()) {
            new ClassReader(in).accept(new ClassVisitor(SpringAsmInfo.ASM_VERSION) {
                @Override
                public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                                                 String[] exceptions) {
                    return new MethodVisitor(SpringAsmInfo.ASM_VERSION) {
                        @Override
                        public void visitInvokeDynamicInsn(String method, String type, Handle bootstrap,
                                                           Object... arguments) {
                            if ("java/lang/invoke/LambdaMetafactory".equals(bootstrap.getOwner())
                                    && arguments.length > 0 && arguments[0] instanceof Type erased) {
                                sites.add(new LambdaSite(creator, Type.getReturnType(type).getClassName(), method,
                                        erased.getDescriptor()));
                            }
                        }
                    };
                }
            }, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
        } catch (IOException | RuntimeException e) {
            // not readable as a class file: it makes no lambda this check can see
        }
    }

    /**
     * Whether {@code type}, a class outside the scanned packages, or one of its own supertypes carries {@code @Fenced}
     * (on the type or a method), read with ASM; {@code java.*} and unreadable types do not.
     */
    private static boolean fencedOutside(String type, MetadataReaderFactory readers, Map<String, Boolean> known) {
        if (type == null || type.startsWith("java.")) {
            return false;
        }
        Boolean answer = known.get(type);
        if (answer != null) {
            return answer;
        }
        known.put(type, false); // a cycle cannot happen in valid class files; this guards against looping anyway
        boolean fenced = false;
        try {
            AnnotationMetadata metadata = readers.getMetadataReader(type).getAnnotationMetadata();
            fenced = metadata.isAnnotated(FENCED) || metadata.hasAnnotatedMethods(FENCED);
            List<String> supers = new ArrayList<>(List.of(metadata.getInterfaceNames()));
            if (metadata.getSuperClassName() != null) {
                supers.add(metadata.getSuperClassName());
            }
            for (int i = 0; !fenced && i < supers.size(); i++) {
                fenced = fencedOutside(supers.get(i), readers, known);
            }
        } catch (IOException | RuntimeException e) {
            fenced = false; // not on the class path as a file: nothing to read
        }
        known.put(type, fenced);
        return fenced;
    }

    private static void add(MergedAnnotation<Fenced> fenced, Set<String> resources) {
        if (fenced.isPresent()) {
            String resource = fenced.getString("resource");
            if (!resource.isBlank()) {
                resources.add(resource);
            }
        }
    }
}

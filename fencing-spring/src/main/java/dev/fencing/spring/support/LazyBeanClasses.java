package dev.fencing.spring.support;

import org.springframework.beans.factory.annotation.AnnotatedBeanDefinition;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.type.MethodMetadata;
import org.springframework.util.ClassUtils;

import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The classes that beans not created at startup (lazy ones, prototypes, scoped targets) may have when their
 * definitions know them by a supertype only: a {@code @Bean} method declared by an interface
 * ({@code @Bean AccountRepository accounts() { return new JdbcAccountRepository(..); }}), a {@code FactoryBean}'s
 * product type. Creating the bean to see its class would defeat its laziness; instead the classes with
 * {@code @Fenced} under the application's packages (its {@code @ComponentScan}s, its {@code @EnableFencing} class's,
 * and the package of each configuration class of its own declaring such a bean) that implement one of those types
 * are read with ASM ({@link DeclaredResources}) and checked at startup like beans. A class found there need not be
 * the bean's (it is checked all the same, as woven classes are); one outside them is checked when the bean is created
 * ({@link LateBeanCheck}).
 */
final class LazyBeanClasses {

    private static final String AUTO_CONFIGURATION = "org.springframework.boot.autoconfigure.AutoConfiguration";

    private LazyBeanClasses() {
    }

    /**
     * Each class that may be the class of a bean not created yet, but for the {@code checked} ones, with the name of
     * such a bean; empty, without reading any class file, when every bean not created is known by its class.
     */
    static Map<Class<?>, String> candidates(ConfigurableListableBeanFactory beanFactory, Set<Class<?>> checked) {
        Map<Class<?>, String> hidden = new LinkedHashMap<>();
        Set<String> packages = new TreeSet<>();
        ClassLoader loader = beanFactory.getBeanClassLoader();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            if (beanFactory.containsSingleton(name) && !beanFactory.isFactoryBean(name)) {
                continue; // created: startup checked its class (a factory's product is known by its declared type)
            }
            BeanDefinition definition = beanFactory.getBeanDefinition(name);
            boolean factoryMethod = definition.getFactoryMethodName() != null;
            if (definition.isAbstract() || !factoryMethod && !beanFactory.isFactoryBean(name)) {
                continue; // a definition of its class: that class is the bean's, checked as its type
            }
            Class<?> type = beanFactory.getType(name, false);
            if (type == null || type == Object.class || type.isPrimitive() || type.isArray()
                    || Modifier.isFinal(type.getModifiers()) || Proxy.isProxyClass(type)) {
                continue;
            }
            hidden.putIfAbsent(ClassUtils.getUserClass(type), name);
            String declaring = declaringClass(definition);
            if (declaring != null && !isAutoConfiguration(declaring, loader)) {
                packages.add(ClassUtils.getPackageName(declaring));
            }
        }
        Map<Class<?>, String> candidates = new LinkedHashMap<>();
        if (hidden.isEmpty()) {
            return candidates;
        }
        packages.addAll(DeclaredResources.packages(beanFactory));
        packages.removeIf(String::isEmpty); // the default package: scanning it would read the whole class path
        Set<String> fencedTypes = new TreeSet<>();
        DeclaredResources.scan(outermost(packages), loader, fencedTypes);
        for (String typeName : fencedTypes) {
            Class<?> type;
            try {
                type = ClassUtils.forName(typeName, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                continue; // a missing optional dependency: no bean can be of it
            }
            if (type.isInterface() || Modifier.isAbstract(type.getModifiers()) || checked.contains(type)) {
                continue;
            }
            for (Map.Entry<Class<?>, String> bean : hidden.entrySet()) {
                if (bean.getKey().isAssignableFrom(type)) {
                    candidates.put(type, bean.getValue());
                    break;
                }
            }
        }
        return candidates;
    }

    /** The class declaring the {@code @Bean} method of {@code definition}, or {@code null}. */
    private static String declaringClass(BeanDefinition definition) {
        if (definition instanceof AnnotatedBeanDefinition annotated) {
            MethodMetadata method = annotated.getFactoryMethodMetadata();
            return method != null ? method.getDeclaringClassName() : null;
        }
        return null;
    }

    /** Whether {@code className} is a library's auto-configuration, or nested in one: not the application's. */
    static boolean isAutoConfiguration(String className, ClassLoader loader) {
        try {
            return isAutoConfiguration(ClassUtils.forName(className, loader));
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** Whether {@code type} is annotated {@code @AutoConfiguration}, or nested in a class that is. */
    static boolean isAutoConfiguration(Class<?> type) {
        for (Class<?> current = type; current != null; current = current.getEnclosingClass()) {
            for (java.lang.annotation.Annotation annotation : current.getAnnotations()) {
                if (annotation.annotationType().getName().equals(AUTO_CONFIGURATION)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** {@code packages} without those under another of them, which a scan of that one reads already. */
    private static Set<String> outermost(Set<String> packages) {
        Set<String> outermost = new TreeSet<>();
        for (String name : packages) {
            if (packages.stream().noneMatch(other -> !other.equals(name) && name.startsWith(other + "."))) {
                outermost.add(name);
            }
        }
        return outermost;
    }
}

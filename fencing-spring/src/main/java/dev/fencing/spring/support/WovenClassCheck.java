package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.guard.FencePoint;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.asm.Type;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The check of the classes weaving fences wherever they are made ({@code new}), beans or not: each class under the
 * application's packages that carries {@code @Fenced}, or extends or implements a type that does, must be woven, see
 * its annotations (weaving cannot see one on an interface or an overridden method) and build its fence. Run by the
 * startup check in ASPECTJ mode and by {@link FencingSupport#verifyWovenClasses} for an aspect configured by hand.
 */
final class WovenClassCheck {

    private static final Log log = LogFactory.getLog(WovenClassCheck.class);

    private WovenClassCheck() {
    }

    /**
     * Checks every class of {@code fencedTypes} but those in {@code skip} (beans, checked as beans), adding each
     * problem, with its method, to {@code problems}, and each checking method to {@code unkeyed} or {@code keyed} by
     * its resource (for {@link ResourceNames#overlaps}). Loaded without being initialized; a class that cannot be
     * loaded (a missing optional dependency) is reported at WARN and not checked.
     */
    static void check(FencingSupport support, ClassLoader loader, Set<String> fencedTypes, Set<Class<?>> skip,
                      Set<String> problems, Map<String, Set<String>> unkeyed, Map<String, Set<String>> keyed) {
        for (String name : fencedTypes) {
            Class<?> type;
            try {
                type = ClassUtils.forName(name, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                log.warn("Could not load " + name + " to check that its @Fenced methods are woven (" + e + "); if "
                        + "it is loaded later (an optional dependency present then), its weaving was not checked");
                continue;
            }
            if (type.isInterface() || type.isAnnotation() || skip.contains(type)) {
                continue;
            }
            for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type,
                    ReflectionUtils.USER_DECLARED_METHODS)) {
                String operation = FencePointSource.describe(type, method);
                int modifiers = method.getModifiers();
                if (Modifier.isStatic(modifiers)) {
                    if (method.getDeclaringClass() == type
                            && MergedAnnotations.from(method, SearchStrategy.DIRECT).isPresent(Fenced.class)) {
                        problems.add(operation + " is static; @Fenced applies to instance methods only");
                    }
                    continue;
                }
                if (Modifier.isAbstract(modifiers)) {
                    continue;
                }
                FencePointSource.Resolution found = support.resolutions().resolutionFor(method, type);
                if (found == null) {
                    continue;
                }
                FencePoint point;
                try {
                    point = support.points().pointFor(method, type);
                } catch (FencingConfigurationException e) {
                    problems.add(e.getMessage());
                    continue;
                }
                if (!point.acquire()) {
                    (point.hasKey() ? keyed : unkeyed).computeIfAbsent(point.resource(), r -> new TreeSet<>())
                            .add(operation);
                }
                checkWoven(operation, method, type, found, problems);
            }
        }
    }

    /**
     * Adds a problem for each lambda or method reference in {@code sites} whose interface method is fenced: its class
     * is made at run time, never woven, and weaving cannot see an annotation on an interface anyway, so each call of
     * it would run unfenced.
     */
    static void checkLambdas(FencingSupport support, ClassLoader loader, List<DeclaredResources.LambdaSite> sites,
                             Set<String> problems) {
        for (DeclaredResources.LambdaSite site : sites) {
            Class<?> type;
            try {
                type = ClassUtils.forName(site.type(), loader);
            } catch (ClassNotFoundException | LinkageError e) {
                continue;
            }
            for (Method method : type.getMethods()) {
                if (method.getName().equals(site.method()) && Modifier.isAbstract(method.getModifiers())
                        && Type.getMethodDescriptor(method).equals(site.descriptor())
                        && support.resolutions().resolutionFor(method, type) != null) {
                    problems.add(ClassUtils.getShortName(site.creator()) + " (" + site.creator() + ") implements "
                            + FencePointSource.describe(type, method) + ", which is @Fenced, with a lambda or a "
                            + "method reference: no woven code runs for it (its class is made at run time, and "
                            + "weaving cannot see an annotation on an interface), so its calls would run unfenced; "
                            + "implement " + ClassUtils.getShortName(type) + " with a class that puts @Fenced on "
                            + method.getName() + ", or use PROXY mode with a bean");
                }
            }
        }
    }

    /**
     * Adds why {@code method}, fenced as {@code found} says on a bean of class {@code type}, would not be fenced by
     * woven code, if it would not.
     */
    static void checkWoven(String operation, Method method, Class<?> type, FencePointSource.Resolution found,
                           Set<String> problems) {
        if (!found.method().equals(method)) {
            // a method the class overrides with another signature (a generic one's override for its type argument,
            // through a bridge): what runs is that override, checked (and named) on its own
            return;
        }
        if (found.targetClass().isInterface()) {
            problems.add(operation + " is @Fenced on an interface the bean is known by, such as a JDK proxy's (a "
                    + "Spring Data repository, say): no woven code runs for it, so it would run unfenced; use PROXY "
                    + "mode, or move @Fenced to a woven class of your own that makes the call");
            return;
        }
        if (found.invisibleToWeaving()) {
            problems.add(operation + " gets @Fenced from " + found.sourceDescription() + ", which AspectJ weaving "
                    + "cannot see (it matches annotations on the executing method or its declaring class only); "
                    + visibleFix(method, type) + ", or use PROXY mode");
            return;
        }
        if (found.composedBy() != null) {
            problems.add(operation + " gets @Fenced from @" + found.composedBy().getSimpleName() + " ("
                    + found.composedBy().getName() + ") on " + found.sourceDescription() + ", which carries it as a "
                    + "meta-annotation: AspectJ weaving matches @Fenced itself only, so it would run unfenced; put "
                    + FencePointSource.describe(found.annotation()) + " itself on " + (found.source() instanceof Method
                    ? operation : operation + " or on " + ((Class<?>) found.source()).getName())
                    + ", or use PROXY mode, where composed annotations are found");
            return;
        }
        if (!isWoven(method)) {
            problems.add(operation + " is @Fenced but " + method.getDeclaringClass().getName() + " was not woven "
                    + "with FencingAspect, so it would run unfenced (another aspect's weaving, such as a woven "
                    + "@Transactional, does not fence it); weave it (aspectj-maven-plugin with fencing-aspect as an "
                    + "aspect library, or -javaagent:aspectjweaver.jar) or use PROXY mode");
        }
    }

    /**
     * Where {@code @Fenced} would be seen by weaving: on the method, or, for a method {@code type} inherits and may
     * override, on an override in {@code type} (this class alone) or on the inherited method (every class that
     * inherits it).
     */
    private static String visibleFix(Method method, Class<?> type) {
        String declared = FencePointSource.describe(method.getDeclaringClass(), method);
        if (method.getDeclaringClass() == type || !method.getDeclaringClass().isAssignableFrom(type)
                || Modifier.isFinal(method.getModifiers())) {
            return "repeat @Fenced on " + declared;
        }
        return "override " + method.getName() + " in " + type.getName() + " and put @Fenced on the override (this "
                + "class alone), or repeat @Fenced on " + declared + " (every class that inherits it)";
    }

    /**
     * Whether FencingAspect wove a fence into {@code method}: it marks each method it fences with {@link WovenFence}
     * ({@code declare @method}), under compile-time and load-time weaving, its advice inlined or not. A body moved into
     * {@code name_aroundBodyN} is no proof: any around advice does that (spring-aspects' {@code @Transactional}), and
     * for any overload of the name.
     */
    static boolean isWoven(Method method) {
        return !Modifier.isAbstract(method.getModifiers()) && method.isAnnotationPresent(WovenFence.class);
    }
}

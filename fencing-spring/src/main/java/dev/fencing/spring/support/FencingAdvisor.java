package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import org.aopalliance.aop.Advice;
import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.function.BooleanSupplier;

/**
 * A PROXY-mode advisor: matches methods that have a fence point (the same cached lookup the interceptor uses) that
 * acquires, or one that checks, and advises them with a {@link FencingInterceptor}. Two are registered, so that
 * acquiring points can run outside {@code @Transactional} and checking points inside it.
 */
final class FencingAdvisor extends AbstractPointcutAdvisor {

    private static final long serialVersionUID = 1L;

    private final transient FencingSupport support;
    private final transient Pointcut pointcut;
    private final boolean acquiring;

    /**
     * @param acquiring    whether this advisor takes the {@code acquire = true} points, or the checking ones
     * @param classProxies whether every proxy subclasses its bean's class (asked when a final class matches)
     */
    FencingAdvisor(FencingSupport support, boolean acquiring, BooleanSupplier classProxies) {
        this.support = support;
        this.pointcut = new FencedMethodPointcut(support.resolutions(), acquiring, classProxies);
        this.acquiring = acquiring;
    }

    /** Whether this advisor takes the {@code acquire = true} points. */
    boolean acquiring() {
        return acquiring;
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    /**
     * A new interceptor each time: Spring asks once per advice chain it builds (each proxy's method, cached by the
     * proxy), so every fenced method of every proxy runs its own interceptor, which remembers that method's fence.
     */
    @Override
    public Advice getAdvice() {
        return new FencingInterceptor(support);
    }

    /**
     * Asks the support's {@link FenceResolutions}, the cache the interceptor's fence points and the startup validator
     * use, so each method is looked up once; it needs no collaborators, so matching (while bean post-processors are
     * registered) creates none of the application's beans.
     */
    private static final class FencedMethodPointcut extends StaticMethodMatcherPointcut {
        private final FenceResolutions resolutions;
        private final boolean acquiring;
        private final BooleanSupplier classProxies;

        FencedMethodPointcut(FenceResolutions resolutions, boolean acquiring, BooleanSupplier classProxies) {
            this.resolutions = resolutions;
            this.acquiring = acquiring;
            this.classProxies = classProxies;
            setClassFilter(new CandidateFilter());
        }

        /**
         * Matches every method {@code @Fenced} applies to, even one whose annotation is invalid: the startup
         * validator reports all problems at once, and such a method refuses every call if it ever runs.
         */
        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            FencePointSource.Resolution resolution = resolutions.resolutionFor(method, targetClass);
            if (resolution == null || resolution.annotation().acquire() != acquiring) {
                return false;
            }
            // a JDK proxy's or a lambda's class is final, and proxied through its interfaces whatever the settings
            if (Modifier.isFinal(targetClass.getModifiers()) && !Proxy.isProxyClass(targetClass)
                    && !ClassUtils.isLambdaClass(targetClass)) {
                // CGLIB cannot subclass the class, and a JDK proxy has only the interfaces' methods: fail here,
                // with what to do, rather than with CGLIB's error or not at all
                if (!declaredByAnInterface(method, targetClass)) {
                    throw new FencingConfigurationException("@Fenced on " + resolution.operation() + ", a method "
                            + "of the final class " + targetClass.getName() + " that no interface of it declares: a "
                            + "Spring proxy cannot subclass a final class, so the bean cannot be fenced; make the "
                            + "class non-final" + KotlinHints.forFinalClass(targetClass) + ", or use "
                            + "@EnableFencing(mode = AdviceMode.ASPECTJ) with weaving");
                }
                if (classProxies.getAsBoolean()) {
                    throw new FencingConfigurationException("@Fenced on " + resolution.operation() + ", a method "
                            + "of the final class " + targetClass.getName() + ", and proxies here subclass the bean's "
                            + "class (proxyTargetClass, Spring Boot's default), which a final class forbids; make "
                            + "the class non-final" + KotlinHints.forFinalClass(targetClass) + ", proxy it through "
                            + "its interface (spring.aop.proxy-target-class="
                            + "false with Boot), or use @EnableFencing(mode = AdviceMode.ASPECTJ) with weaving");
                }
            }
            return true;
        }

        private static boolean declaredByAnInterface(Method method, Class<?> type) {
            for (Class<?> face : ClassUtils.getAllInterfacesForClassAsSet(type)) {
                if (ClassUtils.hasMethod(face, method.getName(), method.getParameterTypes())) {
                    return true;
                }
            }
            return false;
        }
    }

    private static final class CandidateFilter implements ClassFilter {
        @Override
        public boolean matches(Class<?> clazz) {
            return AnnotationUtils.isCandidateClass(clazz, Fenced.class);
        }
    }
}

package dev.fencing.spring;

import dev.fencing.annotation.Fenced;
import dev.fencing.attribute.FencePointSource;
import dev.fencing.attribute.FencingSupport;
import org.aopalliance.aop.Advice;
import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.annotation.AnnotationUtils;

import java.lang.reflect.Method;

/**
 * The PROXY-mode advisor: matches methods that have a fence point (the same lookup the interceptor caches) and
 * advises them with a {@link FencingInterceptor}.
 */
public final class FencingAdvisor extends AbstractPointcutAdvisor {

    private static final long serialVersionUID = 1L;

    private final transient FencingInterceptor interceptor;
    private final transient Pointcut pointcut;

    public FencingAdvisor(FencingSupport support) {
        this.interceptor = new FencingInterceptor(support);
        this.pointcut = new FencedMethodPointcut();
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }

    private static final class FencedMethodPointcut extends StaticMethodMatcherPointcut {
        FencedMethodPointcut() {
            setClassFilter(new CandidateFilter());
        }

        /**
         * Matches every method {@code @Fenced} applies to, even one whose annotation is invalid: the startup
         * validator reports all problems at once, and such a method refuses every call if it ever runs.
         */
        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            return FencePointSource.resolve(method, targetClass != null ? targetClass : method.getDeclaringClass()) != null;
        }
    }

    private static final class CandidateFilter implements ClassFilter {
        @Override
        public boolean matches(Class<?> clazz) {
            return AnnotationUtils.isCandidateClass(clazz, Fenced.class);
        }
    }
}

package dev.fencing.spring.support;

import dev.fencing.annotation.Fenced;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.Pointcut;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.Ordered;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.annotation.AnnotationUtils;

import java.lang.reflect.Method;

/**
 * A PROXY-mode advisor, outermost ({@link Ordered#HIGHEST_PRECEDENCE}), of the checking {@code @Fenced} methods that
 * return a reactive type: every subscription after the first runs the proxy's whole chain again from here, on a copy
 * of the method invocation. Spring's reactive transaction interceptor, which sits outside the fence (so the check
 * joins the transaction), proceeds with the same method invocation on every subscription of the publisher it
 * returned, and that invocation had moved past the fence on the first one: a {@code retry()} ran the body unchecked.
 */
final class ResubscribingAdvisor extends AbstractPointcutAdvisor {

    private static final long serialVersionUID = 1L;

    private final transient Pointcut pointcut;

    ResubscribingAdvisor(FenceResolutions resolutions) {
        this.pointcut = new ReactiveCheckingPointcut(resolutions);
        setOrder(Ordered.HIGHEST_PRECEDENCE);
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    /** A new interceptor for each advice chain Spring builds (one per proxied method), remembering its adapter. */
    @Override
    public Advice getAdvice() {
        return new ResubscribingInterceptor();
    }

    private static final class ResubscribingInterceptor implements MethodInterceptor {
        private volatile ReactiveAdapter adapter;

        @Override
        public Object invoke(MethodInvocation invocation) throws Throwable {
            ReactiveAdapter known = adapter;
            if (known == null) {
                known = ReactiveReturnTypes.adapterFor(invocation.getMethod().getReturnType());
                if (known == null) {
                    return invocation.proceed();
                }
                adapter = known;
            }
            if (!(invocation instanceof ProxyMethodInvocation proxied)) {
                return invocation.proceed();
            }
            return ReactorFencer.resubscribing(proxied, known);
        }
    }

    /** The checking fence points whose method returns a reactive type, when the reactive fence can be built. */
    private static final class ReactiveCheckingPointcut extends StaticMethodMatcherPointcut {
        private final FenceResolutions resolutions;

        ReactiveCheckingPointcut(FenceResolutions resolutions) {
            this.resolutions = resolutions;
            setClassFilter(clazz -> AnnotationUtils.isCandidateClass(clazz, Fenced.class));
        }

        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            if (!ReactiveReturnTypes.FENCING_REACTOR
                    || ReactiveReturnTypes.adapterFor(method.getReturnType()) == null) {
                return false;
            }
            FencePointSource.Resolution resolution = resolutions.resolutionFor(method, targetClass);
            return resolution != null && !resolution.annotation().acquire();
        }
    }
}

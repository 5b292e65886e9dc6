package dev.fencing.aspectj;

import dev.fencing.FencingConfigurationException;
import dev.fencing.spring.support.FencingSupport;
import org.aspectj.lang.JoinPoint;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.annotation.DeclarePrecedence;
import org.aspectj.lang.reflect.MethodSignature;
import org.springframework.util.ClassUtils;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The fence for AspectJ weaving (compile-time with ajc, load-time with {@code -javaagent:aspectjweaver.jar}; the
 * jar ships {@code META-INF/aop.xml} declaring it). A singleton aspect: configure it once with
 * {@link #configure(FencingSupport)} ({@code @EnableFencing(mode = ASPECTJ)} does), until then every fenced call is
 * refused. Weaving sees an annotation only where the woven code is: on the executing method itself, or on the class
 * that declares it. Annotations on interfaces (their methods or the interface type), on overridden methods and on
 * subclasses are invisible to it: repeat them on the implementation ({@code @EnableFencing(mode = ASPECTJ)} refuses
 * to start otherwise).
 *
 * <p>Two advices, one for method-level and one for type-level {@code @Fenced}, that can never both match one join
 * point; a woven transaction aspect (spring-aspects) runs outside this one, so the check joins its transaction, and
 * a woven {@code @Async} aspect runs outside both, so the check of an {@code @Async} method runs on the executor,
 * where its write does.
 */
@Aspect
@DeclarePrecedence("org.springframework.scheduling.aspectj.*, org.springframework.transaction.aspectj.*, "
        + "dev.fencing.aspectj.FencingAspect")
public class FencingAspect {

    private volatile FencingSupport support;

    /** For AspectJ's singleton instantiation; use {@code FencingAspect.aspectOf()} (woven code) to reach it. */
    public FencingAspect() {
    }

    /** Connects the woven aspect to its store, issuer and counters. May be called again to replace them. */
    public synchronized void configure(FencingSupport support) {
        this.support = java.util.Objects.requireNonNull(support, "support");
    }

    /** Whether {@link #configure(FencingSupport)} was called. */
    public boolean isConfigured() {
        return support != null;
    }

    /**
     * Detaches {@code expected} if it is still the configured support (context shutdown): fenced calls are refused
     * until configured again. Another context's configuration is left alone.
     */
    public synchronized void detach(FencingSupport expected) {
        if (support == expected) {
            support = null;
        }
    }

    @Around("execution(@dev.fencing.annotation.Fenced !static * *(..))")
    public Object fencedMethod(ProceedingJoinPoint pjp) throws Throwable {
        return fence(pjp);
    }

    @Around("@within(dev.fencing.annotation.Fenced) && execution(public !static * *(..))"
            + " && !execution(@dev.fencing.annotation.Fenced * *(..))")
    public Object fencedType(ProceedingJoinPoint pjp) throws Throwable {
        return fence(pjp);
    }

    private Object fence(ProceedingJoinPoint pjp) throws Throwable {
        Method method = ((MethodSignature) pjp.getStaticPart().getSignature()).getMethod();
        FencingSupport current = support;
        if (current == null) {
            throw new FencingConfigurationException("FencingAspect is woven into "
                    + describe(method)
                    + " but not configured, so the call is refused; use @EnableFencing(mode = AdviceMode.ASPECTJ) or "
                    + "call FencingAspect.aspectOf().configure(...) at startup. If this application also uses "
                    + "@EnableFencing in PROXY mode, stop weaving: the fence must not run twice");
        }
        // getArgs() copies the arguments: only a keyed point asks for them; unbound method references capture
        // nothing, so no per-call lambda
        return current.invoke(method, method.getDeclaringClass(), pjp, JoinPoint::getArgs,
                ProceedingJoinPoint::proceed);
    }

    /** {@code SimpleClassName.method(ParamType, ...)}: woven code runs in the user's own class, never a proxy. */
    private static String describe(Method method) {
        return ClassUtils.getShortName(method.getDeclaringClass()) + "." + method.getName()
                + Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName)
                .collect(Collectors.joining(", ", "(", ")"));
    }
}

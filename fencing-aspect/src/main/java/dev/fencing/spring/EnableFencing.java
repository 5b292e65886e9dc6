package dev.fencing.spring;

import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Turns on {@code @Fenced} for the beans of this context. Uses the context's {@link dev.fencing.store.FenceStore}
 * bean (an in-memory store when there is none, which protects writes within this JVM only), its
 * {@link dev.fencing.issuer.TokenIssuer} bean for {@code @Fenced(acquire = true)}, and its {@code MeterRegistry}
 * when present. Every fenced method is checked at startup; misconfiguration fails the context refresh.
 *
 * <p>{@link AdviceMode#PROXY} (default) advises beans through Spring proxies with one {@code MethodInterceptor},
 * registering only the infrastructure auto-proxy creator (no global {@code @Aspect} auto-proxying).
 * {@link AdviceMode#ASPECTJ} configures the woven {@link dev.fencing.aspectj.FencingAspect} instead and creates no
 * proxy, so the fence never runs twice on one call.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import(FencingConfigurationSelector.class)
public @interface EnableFencing {

    /** How fenced methods are intercepted: Spring proxies, or AspectJ weaving (compile-time or load-time). */
    AdviceMode mode() default AdviceMode.PROXY;

    /**
     * PROXY mode only: whether to proxy classes (CGLIB) rather than interfaces. When {@code false}, a bean that
     * implements interfaces gets a JDK proxy, and a {@code @Fenced} method missing from those interfaces is a
     * startup error. Applies to every bean the infrastructure auto-proxy creator proxies, as with
     * {@code @EnableTransactionManagement}.
     */
    boolean proxyTargetClass() default false;

    /**
     * PROXY mode only: the order of the fence advisor. It must run inside {@code @Transactional}: when a method
     * carries both, startup fails unless this order is greater than the transaction advisor's (for example
     * {@code @EnableTransactionManagement(order = 0)}).
     */
    int order() default Ordered.LOWEST_PRECEDENCE;

    /** How long {@code @Fenced(acquire = true)} waits for a lock, in milliseconds. */
    long acquireTimeoutMillis() default 10_000;

}

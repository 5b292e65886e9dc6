package dev.fencing.spring;

import dev.fencing.mode.FenceMode;
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
 * bean (required: startup fails without one unless {@link #allowInMemoryStore()} is set), its
 * {@link dev.fencing.issuer.TokenIssuer} bean for {@code @Fenced(acquire = true)}, and its {@code MeterRegistry}
 * when present. A {@link dev.fencing.signing.TokenVerifier} bean makes every check verify the token's signature
 * first (a forged token never reaches the store); a {@link dev.fencing.signing.TokenSigner} bean signs the tokens
 * acquiring points take (the issuer bean itself is left as it is). Two beans of one of these kinds, a signer whose
 * tokens the verifier refuses, or a verifier with acquiring points and nothing that signs fail startup. These are
 * looked up once the context's singletons exist (or on the first fenced call, if earlier), never while bean
 * post-processors are being registered. Every fenced method is checked at startup and the store's
 * {@link dev.fencing.store.FenceStore#verify()} runs then; misconfiguration fails the context refresh.
 *
 * <p>{@link AdviceMode#PROXY} (default) advises beans through Spring proxies with one {@code MethodInterceptor},
 * registering only the infrastructure auto-proxy creator (no global {@code @Aspect} auto-proxying).
 * {@link AdviceMode#ASPECTJ} configures the woven {@code dev.fencing.aspectj.FencingAspect} instead and creates no
 * proxy, so the fence never runs twice on one call; it needs the {@code fencing-aspect} module (startup fails
 * naming it when it is missing), PROXY mode needs this module only and no AspectJ.
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

    /**
     * PROXY mode only: the order of the advisor of {@code @Fenced(acquire = true)} methods, which checks nothing and
     * only takes, binds and gives back the lock. By default it runs before every other advisor, so the lock is taken
     * before a {@code @Transactional} method's transaction begins and given back after it has ended: the next holder
     * reads what this one committed, and a lease issuer on the same database never needs a second connection while
     * the transaction holds one. (Inside a transaction, the lock is held until it completes, whatever the order.)
     */
    int acquireOrder() default Ordered.HIGHEST_PRECEDENCE;

    /** How long {@code @Fenced(acquire = true)} waits for a lock, in milliseconds. */
    long acquireTimeoutMillis() default 10_000;

    /**
     * Whether to fall back to an {@link dev.fencing.store.InMemoryFenceStore} (with a warning) when the context has
     * no {@code FenceStore} bean. For tests and demos only: an in-memory store fences writes made inside this JVM,
     * so a second instance of the application is not fenced at all. Without it, a missing store fails startup.
     * Declaring an {@code InMemoryFenceStore} bean has the same effect, without the warning. Either fails startup
     * beside a {@link dev.fencing.issuer.TokenIssuer} bean of a lock service other processes share (anything but an
     * {@code InMemoryTokenIssuer}) unless the {@code Environment} property
     * {@code fencing.store.in-memory.single-instance} is {@code true} or a {@link FencingConfigurer} says
     * {@link FencingConfigurer#singleInstance()}.
     */
    boolean allowInMemoryStore() default false;

    /**
     * The mode of the checks of every resource not named in {@link #observe()}: {@link FenceMode#ENFORCE} (default)
     * refuses a missing, forged or rejected token or an invalid key; {@link FenceMode#OBSERVE} counts it
     * ({@code fencing.checks{enforced="false"}}), logs it (rate-limited) and lets the call run, for rolling fencing
     * out. Switchable at runtime through the {@link dev.fencing.mode.FenceModes} bean (the starter's actuator
     * endpoint does). A store checking at commit cannot observe: startup fails then.
     */
    FenceMode defaultFenceMode() default FenceMode.ENFORCE;

    /**
     * Declared resources ({@code @Fenced(resource = ...)}) whose checks start in {@link FenceMode#OBSERVE}; see
     * {@link #defaultFenceMode()}.
     */
    String[] observe() default {};

}

package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.guard.FenceBracket;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.RejectionListener;
import dev.fencing.guard.FencePoint;
import dev.fencing.guard.LeaseScope;
import dev.fencing.mode.FenceModes;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.FenceStore;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.util.ClassUtils;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What the Spring proxy interceptor and the woven AspectJ aspect share: find the fence point of the invoked method
 * (cached) and run the call through the guard, or straight through when the method is not fenced. Applications
 * meet it only to configure the woven aspect by hand ({@code FencingAspect.aspectOf().configure(new
 * FencingSupport(guard, metrics))}); {@code @EnableFencing} creates and wires one per context.
 *
 * <p>Where {@code @Fenced} applies is looked up once per class and method, by {@link #resolutions()}, which needs
 * none of the collaborators and is shared by the PROXY-mode pointcut, the startup validator and the fence points.
 *
 * <p>A method returning a reactive type (one Spring's {@code ReactiveAdapterRegistry} adapts) runs through the
 * reactive fence instead, created from the same issuer, listener and verifier when the first such method is found;
 * its classes, and Reactor, are loaded only then, so blocking applications need neither.
 *
 * <p>Its store, issuer and counters are either given up front or, with {@link #resolvedOnFirstUse}, looked up the
 * first time they are needed and then cached, so a container can create this object while it is still registering
 * its bean post-processors without creating the application's store, issuer or meter registry early. A lookup that
 * fails is not cached: it fails again, with the same message, on the next use.
 */
public final class FencingSupport {

    private static final Object[] NO_ARGS = {};

    /** Where {@code @Fenced} applies: needs no collaborators, so it exists (and is shared) from the start. */
    private final FenceResolutions resolutions = new FenceResolutions();
    private final Function<FenceResolutions, Resolved> resolver;
    private volatile Resolved resolved;

    /** A support whose guard and counters are known now (the woven aspect without {@code @EnableFencing}, tests). */
    public FencingSupport(FenceGuard guard, FencingMetrics metrics) {
        Objects.requireNonNull(guard, "guard");
        Objects.requireNonNull(metrics, "metrics");
        this.resolved = new Resolved(guard, new FencePointSource(resolutions, metrics, guard), null, null, null);
        this.resolver = shared -> resolved;
    }

    private FencingSupport(Function<FenceResolutions, Resolved> resolver) {
        this.resolver = resolver;
    }

    /**
     * A support that looks up its collaborators on first use ({@link #invoke}, {@link #points()},
     * {@link #verifyStore()}) and caches them; nothing is looked up here.
     *
     * @param store          the fence store; may throw {@link dev.fencing.FencingConfigurationException} when none
     *                       is configured
     * @param issuer         the token issuer, or a supplier of {@code null} when none is configured
     * @param acquireTimeout how long an acquiring point waits for a lock
     * @param metrics        where fence points create their counters
     */
    static FencingSupport resolvedOnFirstUse(Supplier<? extends FenceStore> store,
                                                    Supplier<? extends TokenIssuer> issuer, Duration acquireTimeout,
                                                    Supplier<FencingMetrics> metrics) {
        Objects.requireNonNull(acquireTimeout, "acquireTimeout");
        return resolvedOnFirstUse(store, issuer, () -> acquireTimeout, metrics);
    }

    /**
     * As {@link #resolvedOnFirstUse(Supplier, Supplier, Duration, Supplier)}, the timeout looked up on first use too.
     */
    static FencingSupport resolvedOnFirstUse(Supplier<? extends FenceStore> store,
                                                    Supplier<? extends TokenIssuer> issuer,
                                                    Supplier<Duration> acquireTimeout,
                                                    Supplier<FencingMetrics> metrics) {
        return resolvedOnFirstUse(store, issuer, acquireTimeout, metrics, () -> null);
    }

    /**
     * As above, with the {@link RejectionListener} the guard tells of each rejection (a supplier of {@code null}:
     * none).
     */
    static FencingSupport resolvedOnFirstUse(Supplier<? extends FenceStore> store,
                                                    Supplier<? extends TokenIssuer> issuer,
                                                    Supplier<Duration> acquireTimeout,
                                                    Supplier<FencingMetrics> metrics,
                                                    Supplier<? extends RejectionListener> rejections) {
        return resolvedOnFirstUse(store, issuer, acquireTimeout, metrics, rejections, () -> null);
    }

    /**
     * As above, with the {@link ObservationRegistry} in which each check is observed (a supplier of {@code null}:
     * none).
     */
    static FencingSupport resolvedOnFirstUse(Supplier<? extends FenceStore> store,
                                                    Supplier<? extends TokenIssuer> issuer,
                                                    Supplier<Duration> acquireTimeout,
                                                    Supplier<FencingMetrics> metrics,
                                                    Supplier<? extends RejectionListener> rejections,
                                                    Supplier<? extends ObservationRegistry> observations) {
        return resolvedOnFirstUse(store, issuer, acquireTimeout, metrics, rejections, observations,
                () -> TokenSigning.NONE);
    }

    /**
     * As above, with the {@link TokenSigning} beans: the guard signs what it acquires with the signer and verifies
     * every checked token with the verifier.
     */
    static FencingSupport resolvedOnFirstUse(Supplier<? extends FenceStore> store,
                                                    Supplier<? extends TokenIssuer> issuer,
                                                    Supplier<Duration> acquireTimeout,
                                                    Supplier<FencingMetrics> metrics,
                                                    Supplier<? extends RejectionListener> rejections,
                                                    Supplier<? extends ObservationRegistry> observations,
                                                    Supplier<TokenSigning> signing) {
        return resolvedOnFirstUse(store, issuer, acquireTimeout, metrics, rejections, observations, signing,
                ReactiveFencerFactory.ABSENT);
    }

    /**
     * As above, with the factory of the reactive fence, asked (with the blocking guard's issuer, timeout, listener
     * and verifier) when the first method returning a reactive type is found.
     */
    static FencingSupport resolvedOnFirstUse(Supplier<? extends FenceStore> store,
                                                    Supplier<? extends TokenIssuer> issuer,
                                                    Supplier<Duration> acquireTimeout,
                                                    Supplier<FencingMetrics> metrics,
                                                    Supplier<? extends RejectionListener> rejections,
                                                    Supplier<? extends ObservationRegistry> observations,
                                                    Supplier<TokenSigning> signing,
                                                    ReactiveFencerFactory reactive) {
        return resolvedOnFirstUse(store, issuer, acquireTimeout, metrics, rejections, observations, signing, reactive,
                FenceModes::enforcing);
    }

    /**
     * As above, with the mode of each resource's checks ({@link FenceModes}, switchable at runtime): enforce
     * everywhere unless it says otherwise.
     */
    static FencingSupport resolvedOnFirstUse(Supplier<? extends FenceStore> store,
                                                    Supplier<? extends TokenIssuer> issuer,
                                                    Supplier<Duration> acquireTimeout,
                                                    Supplier<FencingMetrics> metrics,
                                                    Supplier<? extends RejectionListener> rejections,
                                                    Supplier<? extends ObservationRegistry> observations,
                                                    Supplier<TokenSigning> signing,
                                                    ReactiveFencerFactory reactive,
                                                    Supplier<FenceModes> modes) {
        Objects.requireNonNull(modes, "modes");
        Objects.requireNonNull(reactive, "reactive");
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(issuer, "issuer");
        Objects.requireNonNull(acquireTimeout, "acquireTimeout");
        Objects.requireNonNull(metrics, "metrics");
        return new FencingSupport(resolutions -> {
            FenceStore fenceStore = Objects.requireNonNull(store.get(), "store");
            TokenSigning signatures = Objects.requireNonNull(signing.get(), "signing");
            TokenIssuer tokenIssuer = signatures.issuer(issuer.get());
            Duration timeout = Objects.requireNonNull(acquireTimeout.get(), "acquireTimeout");
            RejectionListener listener = rejections.get();
            FenceModes fenceModes = Objects.requireNonNull(modes.get(), "modes");
            FenceGuard guard = FenceGuard.builder(fenceStore).issuer(tokenIssuer)
                    .acquireTimeout(timeout)
                    .rejectionListener(listener).observations(observations.get())
                    .leaseScope(leaseScope()).verifier(signatures.verifier())
                    .modes(fenceModes).build();
            FencingMetrics counters = Objects.requireNonNull(metrics.get(), "metrics");
            ReactiveSide reactiveSide = new ReactiveSide(
                    () -> reactive.create(tokenIssuer, timeout, listener, signatures.verifier(), fenceModes));
            return new Resolved(guard, new FencePointSource(resolutions, counters, guard, reactiveSide), fenceStore,
                    signatures.acquireProblem(tokenIssuer), reactiveSide);
        });
    }

    /**
     * With spring-tx on the class path, a lock taken inside a Spring transaction is held until it completes
     * ({@link TransactionLeaseScope}); without it there are no Spring transactions to wait for.
     */
    private static LeaseScope leaseScope() {
        return SPRING_TX ? TransactionLeaseScope.INSTANCE : LeaseScope.IMMEDIATE;
    }

    private static final boolean SPRING_TX = ClassUtils.isPresent(
            "org.springframework.transaction.support.TransactionSynchronizationManager",
            FencingSupport.class.getClassLoader());

    /**
     * The cached fence of {@code method} on {@code targetClass} (see {@link FencePointSource#fenceFor}): the proxy
     * interceptor runs a {@link FenceBracket} that {@link FenceBracket#enforcing() enforces} itself, around its own
     * {@code proceed()}, and hands every other fence to {@link #invoke(Object, Object[], Object, FenceGuard.Proceed)}.
     */
    Object fenceFor(Method method, Class<?> targetClass) {
        return resolved().points.fenceFor(method, targetClass);
    }

    /**
     * Runs {@code proceed.proceed(target)} under {@code fence}, one {@link #fenceFor} returned (straight through for
     * {@code null}); see {@link FenceGuard#invoke(FencePoint, Object[], Object, FenceGuard.Proceed)}: with a
     * non-capturing {@code proceed} the fence allocates nothing per call. The proxy interceptor's path.
     */
    <C> Object invoke(Object fence, Object[] args, C target, FenceGuard.Proceed<C, Object> proceed) throws Throwable {
        FencePoint point = blockingPoint(fence);
        if (point != null) {
            return resolved().guard.invoke(point, args, target, proceed);
        }
        return fence == null ? proceed.proceed(target) : invokeAsync(resolved(), fence, args, target, proceed);
    }

    /**
     * The point of a blocking method's fence, which the guard runs as a callback: a plain point, or a bracket whose
     * caller could not run it itself (its resource is observed now, or the caller has no frame to run the body in);
     * {@code null} for any other fence.
     */
    private static FencePoint blockingPoint(Object fence) {
        if (fence instanceof FenceBracket bracket) {
            return bracket.point();
        }
        return fence instanceof FencePoint point ? point : null;
    }

    /** The fence of a method returning a future or a reactive type: kept out of the blocking call's path. */
    private static <C> Object invokeAsync(Resolved current, Object fence, Object[] args, C target,
                                          FenceGuard.Proceed<C, Object> proceed) throws Throwable {
        if (fence instanceof FencePointSource.FuturePoint future) {
            return current.guard.invoke(future.point(), args, target, awaiting(proceed));
        }
        FencePointSource.ReactivePoint reactive = (FencePointSource.ReactivePoint) fence;
        return reactive.fencer().invoke(reactive.point(), reactive.adapter(), args, target, proceed);
    }

    /**
     * Runs {@code proceed.proceed(call)} under the fence of {@code method} on {@code targetClass} (if it has one),
     * asking {@code arguments} for the call's arguments only when the fence point has a key (AspectJ's
     * {@code getArgs()} copies them). With non-capturing {@code arguments} and {@code proceed} (method references
     * such as {@code JoinPoint::getArgs}) the fence allocates nothing per call. The woven aspect's path; internal.
     */
    public <C> Object invoke(Method method, Class<?> targetClass, C call, Function<? super C, Object[]> arguments,
                             FenceGuard.Proceed<C, Object> proceed) throws Throwable {
        Resolved current = resolved();
        Object fence = current.points.fenceFor(method, targetClass);
        if (fence == null) {
            return proceed.proceed(call);
        }
        FencePoint blocking = blockingPoint(fence);
        if (blocking != null) {
            return current.guard.invoke(blocking, blocking.hasKey() ? arguments.apply(call) : NO_ARGS, call, proceed);
        }
        if (fence instanceof FencePointSource.FuturePoint future) {
            FencePoint point = future.point();
            return current.guard.invoke(point, point.hasKey() ? arguments.apply(call) : NO_ARGS, call,
                    awaiting(proceed));
        }
        FencePointSource.ReactivePoint reactive = (FencePointSource.ReactivePoint) fence;
        FencePoint point = reactive.point();
        return reactive.fencer().invoke(point, reactive.adapter(), point.hasKey() ? arguments.apply(call) : NO_ARGS,
                call, proceed);
    }

    /**
     * The fence of {@code method} on {@code targetClass} as a bracket the woven aspect runs around its own inlined
     * {@code proceed()} ({@link FenceGuard#bracket}; one with a key needs the call's arguments,
     * {@link FenceBracket#token(Object[])}), or {@code null} when it is not fenced or only {@link #invoke} can fence
     * it (an acquiring, future or reactive point, a store without brackets, observed checks). Asked once per join
     * point; internal.
     *
     * @throws dev.fencing.FencingConfigurationException when the annotation is invalid or a collaborator is missing
     */
    public FenceBracket bracketFor(Method method, Class<?> targetClass) {
        Resolved current = resolved();
        return current.points.fenceFor(method, targetClass) instanceof FenceBracket bracket ? bracket : null;
    }

    /**
     * Whether {@code method} on {@code targetClass} is fenced at all (a woven join point that is not runs straight
     * through). Internal.
     *
     * @throws dev.fencing.FencingConfigurationException when the annotation is invalid or a collaborator is missing
     */
    public boolean fences(Method method, Class<?> targetClass) {
        return resolved().points.fenceFor(method, targetClass) != null;
    }

    /** {@code proceed}, then waiting for the future it returns ({@link AsyncMethods#awaited}). */
    private static <C> FenceGuard.Proceed<C, Object> awaiting(FenceGuard.Proceed<C, Object> proceed) {
        return target -> AsyncMethods.awaited(proceed.proceed(target));
    }

    /**
     * Where {@code @Fenced} applies, per class and method, cached; the fence points are built from it. Never resolves
     * the collaborators: the PROXY-mode pointcut asks it while bean post-processors are being registered.
     */
    FenceResolutions resolutions() {
        return resolutions;
    }

    /** The modes of the guard's checks (resolving the collaborators if not done yet). */
    public FenceModes modes() {
        return resolved().guard.modes();
    }

    /** The cached fence points (resolving the collaborators if not done yet). */
    FencePointSource points() {
        return resolved().points;
    }

    /**
     * The startup check of an application that configures the woven aspect by hand, without a Spring context (what
     * {@code @EnableFencing(mode = ASPECTJ)} checks at startup): reads the class files under {@code packages} without
     * initializing them and fails, listing each problem with its method, when a {@code @Fenced} method would run
     * unfenced or cannot be fenced: a class not woven, an annotation weaving cannot see (on an interface or an
     * overridden method), a static method, a key that does not parse, a resource fenced both with and without a key.
     * {@code FencingAspect.aspectOf().configure(support, packages...)} calls it.
     *
     * @param classLoader what loads the application's classes
     * @param packages    the packages of the woven classes (their subpackages included), not empty, none blank
     * @throws FencingConfigurationException listing every problem found; {@link IllegalArgumentException} for no
     *                                       package or a blank one
     */
    public void verifyWovenClasses(ClassLoader classLoader, Collection<String> packages) {
        Objects.requireNonNull(classLoader, "classLoader");
        if (packages == null || packages.isEmpty() || packages.stream().anyMatch(p -> p == null || p.isBlank())) {
            throw new IllegalArgumentException("name the packages of your woven classes (their subpackages are "
                    + "read too), none blank; was " + (packages == null ? null : packages.stream()
                    .map(p -> p == null ? "null" : "\"" + p + "\"").toList()));
        }
        Set<String> problems = new LinkedHashSet<>();
        for (String name : packages) {
            if (!DeclaredResources.holdsClasses(name, classLoader)) {
                problems.add("package '" + name + "' holds no class on the class path, so nothing under it can be "
                        + "checked: name the packages of your woven classes as Java writes them (com.example.orders; "
                        + "no wildcard, no class name)");
            }
        }
        Map<String, Set<String>> unkeyed = new TreeMap<>();
        Map<String, Set<String>> keyed = new TreeMap<>();
        Set<String> fencedTypes = new TreeSet<>();
        List<DeclaredResources.LambdaSite> lambdas = new ArrayList<>();
        DeclaredResources.scan(packages, classLoader, fencedTypes, lambdas);
        WovenClassCheck.check(this, classLoader, fencedTypes, Set.of(), problems, unkeyed, keyed);
        WovenClassCheck.checkLambdas(this, classLoader, lambdas, problems);
        ResourceNames.overlaps(unkeyed, keyed, problems);
        if (!problems.isEmpty()) {
            throw new FencingConfigurationException("Invalid @Fenced configuration (woven classes under " + packages
                    + "):\n  - " + String.join("\n  - ", problems));
        }
    }

    /**
     * Resolves the collaborators if not done yet and runs {@link FenceStore#verify()} on the store when this support
     * looked it up itself; a support built from a ready guard has no store to verify.
     */
    void verifyStore() {
        Resolved current = resolved();
        if (current.store != null) {
            current.store.verify();
        }
        ReactiveFencer reactive = current.reactive == null ? null : current.reactive.created();
        if (reactive != null) {
            reactive.verifyStore();
        }
    }

    private Resolved resolved() {
        Resolved current = resolved;
        if (current == null) {
            synchronized (this) {
                current = resolved;
                if (current == null) {
                    current = resolver.apply(resolutions);
                    resolved = current;
                }
            }
        }
        return current;
    }

    /**
     * The store this support looked up (an application's bean, or the in-memory fallback), or {@code null} for a
     * support built from a ready guard; resolves the collaborators if not done yet.
     */
    FenceStore store() {
        return resolved().store;
    }

    /**
     * Why {@code @Fenced(acquire = true)} cannot work with the configured signing beans (a verifier, and an issuer
     * that does not sign), or {@code null}; resolves the collaborators if not done yet.
     */
    String signingProblemOfAcquire() {
        return resolved().acquireProblem;
    }

    /**
     * The blocking store's refusal of {@code operation} when the application has only a reactive store, or
     * {@code null}; resolves the collaborators if not done yet.
     */
    String blockingStoreProblem(String operation) {
        return resolved().store instanceof ReactiveOnlyFenceStore reactiveOnly ? reactiveOnly.problem(operation) : null;
    }

    private record Resolved(FenceGuard guard, FencePointSource points, FenceStore store, String acquireProblem,
                            ReactiveSide reactive) {
    }

    /**
     * The reactive fence, created the first time a reactive fenced method is found and then cached; a creation that
     * fails is not cached (it fails again, with the same message, for the next method).
     */
    private static final class ReactiveSide implements Supplier<ReactiveFencer> {
        private final Supplier<ReactiveFencer> factory;
        private volatile ReactiveFencer fencer;

        ReactiveSide(Supplier<ReactiveFencer> factory) {
            this.factory = factory;
        }

        @Override
        public ReactiveFencer get() {
            ReactiveFencer current = fencer;
            if (current == null) {
                synchronized (this) {
                    current = fencer;
                    if (current == null) {
                        current = Objects.requireNonNull(factory.get(), "reactive fencer");
                        fencer = current;
                    }
                }
            }
            return current;
        }

        /** The fence if it was created, else {@code null}. */
        ReactiveFencer created() {
            return fencer;
        }
    }
}

package dev.fencing.reactive;

import dev.fencing.metrics.CheckCounters;
import dev.fencing.mode.FenceModes;
import dev.fencing.mode.ObservedCalls;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.context.TokenUse;
import dev.fencing.context.MissingTokenException;
import dev.fencing.guard.CheckOutcomes;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.guard.RejectionListener;
import dev.fencing.guard.RemoteTokenSetAsideException;
import dev.fencing.guard.UncheckedLeases;
import dev.fencing.issuer.Lease;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.Verification;
import dev.fencing.token.FencingToken;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.util.context.ContextView;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The fence around a call whose work happens when its publisher is subscribed: the reactive form of
 * {@link FenceGuard}, counting and reporting every outcome as it does. On each subscription a checking point takes
 * the token for its effective resource from the Reactor {@link reactor.util.context.Context} (see
 * {@link ReactiveFencing}), else the one bound on the assembling thread, and lets the {@link ReactiveFenceStore}
 * check it atomically with the call, which is assembled and subscribed inside that unit; an acquiring point runs
 * the call under a lock's token, acquired on subscription and released on complete, error and cancel.
 *
 * <p>Every failure (missing, rejected or forged token, invalid key, store error, failed acquisition) is an error
 * signal of the returned publisher, never thrown from {@link #fence}; nothing runs, and nothing blocks, before it is
 * subscribed (in observe mode, see {@link Builder#modes}, a missing, forged or rejected token, or an invalid key, is
 * counted and the call runs instead). Given an {@link ObservationRegistry} ({@link Builder#observations}), each
 * check and each wait for a lock is an {@link Observation}, as in the blocking guard, from subscription to the end of
 * the signals, its parent the observation in the subscriber's context. Unlike the blocking guard it has no
 * {@link dev.fencing.guard.LeaseScope}: an acquired lock is given back when the publisher terminates or is cancelled.
 * As in the blocking guard, a release that fails after the call completed (or was cancelled) is logged at WARNING and
 * the call's signals stand; after the call failed, it is added to the call's error as suppressed. Thread-safe; one
 * instance serves every reactive fenced method.
 */
public final class ReactiveFenceGuard {

    private static final System.Logger LOG = System.getLogger(ReactiveFenceGuard.class.getName());

    private final ReactiveFenceStore store;
    private final ReactiveTokenIssuer issuer;
    private final Duration acquireTimeout;
    private final RejectionListener rejections;
    private final TokenVerifier verifier;
    private final FenceModes modes;
    private final ObservationRegistry observations;

    /** The key of the current observation in a Reactor context (Micrometer's ObservationThreadLocalAccessor.KEY). */
    static final String OBSERVATION_KEY = "micrometer.observation";

    private ReactiveFenceGuard(Builder builder) {
        this.modes = builder.modes == null ? FenceModes.enforcing() : builder.modes;
        this.store = builder.store;
        this.issuer = builder.issuer;
        this.acquireTimeout = builder.acquireTimeout;
        this.rejections = builder.rejections == null ? RejectionListener.NONE : builder.rejections;
        this.verifier = builder.verifier;
        this.observations = builder.observations == null || builder.observations.isNoop() ? null
                : builder.observations;
        if (acquireTimeout.isNegative()) {
            throw new FencingConfigurationException("acquireTimeout must not be negative, was " + acquireTimeout);
        }
    }

    /** Starts a builder for a guard checking tokens in {@code store}: the way to set every collaborator. */
    public static Builder builder(ReactiveFenceStore store) {
        return new Builder(store);
    }

    /**
     * Fails when this guard cannot serve {@code point}; called once per point, at startup where possible.
     *
     * @throws FencingConfigurationException when the point acquires and no issuer is configured
     */
    public void validate(FencePoint point) {
        if (point.acquire() && issuer == null) {
            throw new FencingConfigurationException("@Fenced(acquire = true) on " + point.operation()
                    + " needs a ReactiveTokenIssuer (or a TokenIssuer to adapt) to acquire locks for resource '"
                    + point.resource() + "', and none is configured; provide a TokenIssuer or ReactiveTokenIssuer "
                    + "bean (or pass one to the ReactiveFenceGuard)");
        }
    }

    /**
     * The publisher of {@code call} under the fence described by {@code point}. The tokens bound on the calling
     * thread are captured now; everything else happens on each subscription: the effective resource is computed, the
     * token taken from the subscriber's context (else the captured one), and {@code call} is invoked inside the
     * store's atomic unit, so the method body runs when the write does, never before.
     *
     * @return the call's signals when the fence lets it run; otherwise an error signal, with {@code call} not
     * invoked: {@link MissingTokenException}, a {@link dev.fencing.rule.TokenRejectedException} (stale, duplicate,
     * out of range, or {@link dev.fencing.rule.ForgedTokenException}), {@link dev.fencing.guard.InvalidKeyException},
     * {@link dev.fencing.store.FenceStoreException}, {@link RemoteTokenSetAsideException},
     * {@link dev.fencing.issuer.LockAcquisitionException}
     */
    public <T> Flux<T> fence(FencePoint point, Object[] args, Supplier<? extends Publisher<T>> call) {
        Objects.requireNonNull(point, "point");
        Objects.requireNonNull(call, "call");
        FencingSnapshot assembly = FencingContext.snapshot();
        return Flux.deferContextual(context -> {
            String resource;
            try {
                resource = point.effectiveResource(args);
            } catch (RuntimeException e) {
                if (CheckOutcomes.observedInvalidKey(point, modes, e)) {
                    return Flux.defer(call); // observe mode: enforce would refuse it, so it is counted and runs
                }
                return Flux.error(invalidKey(point, e, context));
            }
            if (point.acquire()) {
                return acquireOrPropagate(point, resource, context, assembly, call);
            }
            if (observations == null || modes.observes(point.resource())) {
                return check(point, resource, context, assembly, call, null);
            }
            Observation observation = started(FenceGuard.OBSERVATION, point, resource, context);
            return observe(check(point, resource, context, assembly, call, observation), observation,
                    CheckOutcomes::forObservation);
        });
    }

    /**
     * Counts a key that names no entity and, with observations, observes it as a refused check of the static
     * resource with no token, as the blocking guard does: every outcome {@code fencing.checks} counts is a
     * {@code fencing.check} observation too.
     */
    private RuntimeException invalidKey(FencePoint point, RuntimeException e, ContextView context) {
        if (observations == null) {
            return CheckOutcomes.invalidKey(point, e);
        }
        Observation observation = started(FenceGuard.OBSERVATION, point, point.resource(), context);
        CheckOutcomes.token(observation, null);
        CheckOutcomes.outcome(observation, "invalid");
        RuntimeException refused = CheckOutcomes.invalidKey(point, e);
        observation.error(refused);
        observation.stop();
        return refused;
    }

    /** An observation of {@code point}, started now, its parent the one in the subscriber's context. */
    private Observation started(String name, FencePoint point, String resource, ContextView context) {
        Observation parent = context.getOrDefault(OBSERVATION_KEY, null);
        return CheckOutcomes.observation(name, observations, point, resource).parentObservation(parent).start();
    }

    /**
     * {@code signals} with {@code observation} current upstream, told of an error (as {@code told} makes it) and
     * stopped when they end; an observation that ended without an outcome gets {@code error}, or {@code cancelled}
     * when its subscriber left first.
     */
    private static <T> Flux<T> observe(Flux<T> signals, Observation observation,
                                       java.util.function.Function<Throwable, Throwable> told) {
        return signals
                .doOnError(t -> observation.error(told.apply(t)))
                .doFinally(signal -> {
                    if (observation.getContext().getLowCardinalityKeyValue("outcome") == null) {
                        observation.lowCardinalityKeyValue("outcome",
                                signal == SignalType.CANCEL ? "cancelled" : "error");
                    }
                    observation.stop();
                })
                .contextWrite(context -> context.put(OBSERVATION_KEY, observation));
    }

    private <T> Flux<T> check(FencePoint point, String resource, ContextView context, FencingSnapshot assembly,
                              Supplier<? extends Publisher<T>> call, Observation observation) {
        FencingSnapshot bound = ReactiveFencing.tokens(context);
        FencingToken token;
        try {
            token = bound.present(resource);
            if (token == null) {
                token = assembly.present(resource);
            }
        } catch (dev.fencing.rule.StaleTokenException lost) { // its lock is known lost here: refused, as stale
            if (modes.observes(point.resource())) {
                // the verdict enforce mode gives, observed: stale, and the call runs outside the store's fence
                FencingMetrics.increment(point.observedChecks().rejected(lost.verdict()));
                modes.observed().recordLockLost(point.operation(), point.resource(), resource, lost.presented());
                return Flux.defer(call);
            }
            CheckOutcomes.token(observation, lost.presented());
            return Flux.error(CheckOutcomes.lockLost(point, lost, rejections, observation));
        }
        if (modes.observes(point.resource())) {
            return observing(point, resource, token, call);
        }
        CheckOutcomes.token(observation, token);
        if (token == null) {
            CheckOutcomes.missing(point, resource, observation);
            Set<String> resources = new LinkedHashSet<>(bound.keySet());
            resources.addAll(assembly.keySet());
            return Flux.error(MissingTokenException.inReactiveChain(resource, point.operation(), resources));
        }
        if (verifier != null) {
            Verification verification = verifier.verify(token);
            if (!verification.valid()) {
                return Flux.error(CheckOutcomes.forged(point, resource, token, verification, rejections,
                        observation));
            }
        }
        Check check = new Check();
        Flux<T> write = Flux.defer(() -> {
            check.start();
            return call.get();
        });
        FencingToken presented = token;
        Flux<T> fenced;
        try {
            fenced = store.fence(resource, presented, write);
        } catch (RuntimeException e) {
            return Flux.error(CheckOutcomes.failed(point, resource, presented, false, e, rejections, observation));
        }
        return fenced
                .onErrorMap(t -> check.end()
                        ? CheckOutcomes.failed(point, resource, presented, check.started(), t, rejections, observation)
                        : t)
                .concatWith(Flux.defer(() -> {
                    if (!check.end()) {
                        return Flux.empty();
                    }
                    if (!check.started()) {
                        return Flux.error(CheckOutcomes.notStarted(point, resource, presented));
                    }
                    CheckOutcomes.accepted(point, observation);
                    return Flux.empty();
                }))
                .doOnCancel(() -> {
                    if (check.end() && check.started()) {
                        // the store accepted; the subscriber left during the write
                        CheckOutcomes.accepted(point, observation);
                    }
                });
    }

    /**
     * A check in observe mode, as {@link FenceGuard}'s: counted with {@code enforced=false} and recorded; a missing,
     * forged or rejected token lets the call run (a rejected one after the store's fence signalled the rejection, so
     * outside it, max_seen untouched); a store failure is signalled as in enforce mode.
     */
    private <T> Flux<T> observing(FencePoint point, String resource, FencingToken token,
                                  Supplier<? extends Publisher<T>> call) {
        CheckCounters checks = point.observedChecks();
        ObservedCalls record = modes.observed();
        if (token == null) {
            FencingMetrics.increment(checks.missing());
            record.record(point.operation(), point.resource(), "missing", true, resource, null, null);
            return Flux.defer(call);
        }
        if (verifier != null && !verifier.verify(token).valid()) {
            FencingMetrics.increment(checks.forged());
            record.record(point.operation(), point.resource(), "forged", true, resource, token, null);
            return Flux.defer(call);
        }
        Check check = new Check();
        Flux<T> write = Flux.defer(() -> {
            check.start();
            return call.get();
        });
        Flux<T> fenced;
        try {
            fenced = store.fence(resource, token, write);
        } catch (RuntimeException e) {
            return Flux.error(CheckOutcomes.failed(point, checks, resource, token, false, e, rejections, null));
        }
        return fenced
                .onErrorResume(t -> {
                    if (!check.started() && t instanceof TokenRejectedException e && e.presented() == token
                            && e.operation() == null && check.end()) {
                        FencingMetrics.increment(checks.rejected(e.verdict()));
                        record.record(point.operation(), point.resource(), e.verdict().outcome(), true, resource,
                                token, e.maxSeen());
                        return Flux.defer(call); // outside the store's fence: max_seen stays where it was
                    }
                    return Flux.error(check.end()
                            ? CheckOutcomes.failed(point, checks, resource, token, check.started(), t, rejections, null)
                            : t);
                })
                .concatWith(Flux.defer(() -> {
                    if (!check.end()) {
                        return Flux.empty();
                    }
                    if (!check.started()) {
                        return Flux.error(CheckOutcomes.notStarted(point, checks, resource, token));
                    }
                    CheckOutcomes.accepted(checks, null);
                    record.record(point.operation(), point.resource(), "accepted", false, resource, token, null);
                    return Flux.empty();
                }))
                .doOnCancel(() -> {
                    if (check.end() && check.started()) {
                        CheckOutcomes.accepted(checks, null);
                    }
                });
    }

    private <T> Flux<T> acquireOrPropagate(FencePoint point, String resource, ContextView context,
                                           FencingSnapshot assembly, Supplier<? extends Publisher<T>> call) {
        // only a lock this process holds is propagated; a token from a request or message is for checks only
        FencingSnapshot bound = ReactiveFencing.tokens(context);
        FencingToken token = bound.get(resource);
        if (token != null) {
            if (bound.isRemote(resource)) {
                return Flux.error(setAside(point, resource, token));
            }
            TokenUse held = bound.useOf(resource);
            // nested under a lock held in the chain: named, and judged, with that lock once this call completes
            return held == null ? Flux.defer(call) : Flux.<T>defer(call).doOnComplete(() -> held.ranUnder(point));
        }
        token = assembly.get(resource);
        if (token != null) {
            if (assembly.isRemote(resource)) {
                return Flux.error(setAside(point, resource, token));
            }
            // the thread's lock, with its use if an acquiring call bound it, so the checks below still mark it
            FencingToken local = token;
            TokenUse use = assembly.useOf(resource);
            return use == null ? Flux.<T>defer(call).contextWrite(ReactiveFencing.bind(local))
                    : Flux.<T>defer(call).doOnComplete(() -> use.ranUnder(point))
                            .contextWrite(ReactiveFencing.bindAcquired(local, use));
        }
        try {
            validate(point);
        } catch (FencingConfigurationException e) {
            return Flux.error(e);
        }
        return Flux.usingWhen(
                acquiring(point, resource, context)
                        .onErrorMap(RuntimeException.class, e -> CheckOutcomes.acquireFailed(point, resource, e))
                        .doOnNext(lease -> FencingMetrics.increment(point.acquisitions().acquired()))
                        .map(Acquired::new),
                acquired -> underLease(point, resource, acquired, call),
                // each release is deferred, so a release that throws instead of signalling still closes the use
                // and, after a completed or cancelled call, is logged rather than signalled; the use is closed
                // before the subscriber hears the call's end (and, should the cleanup itself be cancelled, then)
                acquired -> releaseAfter(acquired.lease, "completed")
                        .then(Mono.fromRunnable(() -> {
                            TokenUse use = acquired.closeUse();
                            if (use != null) {
                                use.ranUnder(point);
                                if (!use.isUsed()) {
                                    UncheckedLeases.reportCallers(use, acquired.lease.token());
                                }
                            }
                        })).doFinally(signal -> acquired.closeUse()),
                (acquired, error) -> Mono.defer(() -> issuer.release(acquired.lease))
                        .onErrorResume(Exception.class, e -> {
                            error.addSuppressed(e); // the call's error is what the subscriber hears of
                            return Mono.empty();
                        }).then(Mono.fromRunnable(acquired::closeUse)).doFinally(signal -> acquired.closeUse()),
                acquired -> releaseAfter(acquired.lease, "was cancelled")
                        .doFinally(signal -> acquired.closeUse()));
    }

    /** The issuer's lease for {@code resource}, its wait observed when observations are on. */
    private Mono<Lease> acquiring(FencePoint point, String resource, ContextView context) {
        Mono<Lease> lease = issuer.acquire(resource, acquireTimeout);
        if (observations == null) {
            return lease;
        }
        return Mono.defer(() -> {
            Observation observation = started(FenceGuard.ACQUIRE_OBSERVATION, point, resource, context);
            return observe(lease.doOnNext(acquired -> CheckOutcomes.acquired(observation, acquired))
                    .doOnError(e -> CheckOutcomes.outcome(observation, "failed")).flux(), observation,
                    e -> CheckOutcomes.acquisitionForObservation(point, resource, e)).singleOrEmpty();
        });
    }

    /** One subscription's lease, with the use its token's binding carries to the checks below it. */
    private static final class Acquired {
        final Lease lease;
        /** Opened once the lease's token is bound; taken (set to null) by the one close. */
        private final AtomicReference<TokenUse> use = new AtomicReference<>();

        Acquired(Lease lease) {
            this.lease = lease;
        }

        void opened(TokenUse opened) {
            use.set(opened);
        }

        /** Closes the use, if one was opened and not yet closed, and returns it; {@code null} after the first call. */
        TokenUse closeUse() {
            TokenUse opened = use.getAndSet(null);
            if (opened != null) {
                opened.close();
            }
            return opened;
        }
    }

    /**
     * Releases the lease of a call that completed or was cancelled. A release that fails is logged at WARNING, not
     * signalled: the call's write is done, and an error now would tell the subscriber it failed; the lock service
     * frees the lock when the lease expires.
     */
    private Mono<Void> releaseAfter(Lease lease, String ending) {
        // deferred: a release that throws instead of signalling is logged the same way
        return Mono.defer(() -> issuer.release(lease)).onErrorResume(Exception.class, e -> {
            LOG.log(System.Logger.Level.WARNING, () -> "Could not release the lock on '" + lease.token().resource()
                    + "' after its fenced call " + ending + " (the call's signals stand); the lock service frees it "
                    + "when the lease expires: " + e); // expected in an outage: no trace
            return Mono.empty();
        });
    }

    private static <T> Flux<T> underLease(FencePoint point, String resource, Acquired acquired,
                                          Supplier<? extends Publisher<T>> call) {
        FencingToken token;
        try {
            token = CheckOutcomes.leaseToken(point, resource, acquired.lease);
        } catch (RuntimeException e) {
            return Flux.error(e);
        }
        // a check presenting the token once the lease is known lost is refused before the store (fail closed)
        TokenUse use = TokenUse.open(token, acquired.lease::isLost);
        acquired.opened(use);
        return Flux.<T>defer(call).contextWrite(ReactiveFencing.bindAcquired(token, use));
    }

    private static RemoteTokenSetAsideException setAside(FencePoint point, String resource, FencingToken remote) {
        // a caller's token (header, message): acquiring would set it aside, and its stale request would land
        return new RemoteTokenSetAsideException(resource, point.operation(), remote.value());
    }

    /**
     * One subscription's check: whether the store started the write, and whether its outcome was counted (once,
     * by whichever of error, completion and cancellation comes first).
     */
    private static final class Check {
        private static final int STARTED = 1;
        private static final int ENDED = 2;
        private final AtomicInteger state = new AtomicInteger();

        void start() {
            state.getAndUpdate(s -> s | STARTED);
        }

        boolean started() {
            return (state.get() & STARTED) != 0;
        }

        /** Marks the check ended; {@code true} for the first caller only, who counts the outcome. */
        boolean end() {
            int previous = state.getAndUpdate(s -> s | ENDED);
            return (previous & ENDED) == 0;
        }
    }

    /**
     * Builds a {@link ReactiveFenceGuard}. Only the store is required; without an issuer no point may acquire.
     */
    public static final class Builder {
        private final ReactiveFenceStore store;
        private ReactiveTokenIssuer issuer;
        private Duration acquireTimeout = FenceGuard.DEFAULT_ACQUIRE_TIMEOUT;
        private RejectionListener rejections;
        private TokenVerifier verifier;
        private FenceModes modes;
        private ObservationRegistry observations;

        private Builder(ReactiveFenceStore store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /**
         * Where acquiring points get tokens; {@code null} (the default) when no method acquires. For a blocking
         * issuer, pass {@link ReactiveTokenIssuer#fromBlocking(dev.fencing.issuer.TokenIssuer)}.
         */
        public Builder issuer(ReactiveTokenIssuer issuer) {
            this.issuer = issuer;
            return this;
        }

        /** How long an acquiring point waits for the lock; {@link FenceGuard#DEFAULT_ACQUIRE_TIMEOUT} by default. */
        public Builder acquireTimeout(Duration acquireTimeout) {
            this.acquireTimeout = Objects.requireNonNull(acquireTimeout, "acquireTimeout");
            return this;
        }

        /** Told of each rejected or forged token, never of an accepted one; none by default. */
        public Builder rejectionListener(RejectionListener rejections) {
            this.rejections = rejections;
            return this;
        }

        /**
         * Verifies each checked token's signature before the store sees it, as {@link FenceGuard.Builder#verifier}
         * does; {@code null} (the default): tokens are not verified.
         */
        public Builder verifier(TokenVerifier verifier) {
            this.verifier = verifier;
            return this;
        }

        /**
         * The mode of each resource's checks, as {@link FenceGuard.Builder#modes} (share the blocking guard's object
         * so that one switch reaches both); {@code null} (the default): enforce everywhere.
         */
        public Builder modes(FenceModes modes) {
            this.modes = modes;
            return this;
        }

        /**
         * Makes each check and each wait for a lock an {@link Observation}, named and tagged as the blocking guard's
         * ({@link FenceGuard.Builder#observations}), plus the outcome {@code cancelled} for a subscriber that left
         * before the outcome was known; {@code null} or a no-op registry (the default): nothing is created.
         */
        public Builder observations(ObservationRegistry observations) {
            this.observations = observations;
            return this;
        }

        /**
         * @throws FencingConfigurationException when the acquire timeout is negative
         */
        public ReactiveFenceGuard build() {
            return new ReactiveFenceGuard(this);
        }
    }
}

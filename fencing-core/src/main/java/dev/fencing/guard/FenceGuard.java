package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.TokenUse;
import dev.fencing.context.FencingScope;
import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.CheckCounters;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.mode.FenceModes;
import dev.fencing.mode.ObservedCalls;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.store.DeferredVerdict;
import dev.fencing.store.FenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.FencedCall;
import dev.fencing.token.FencingToken;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

import java.time.Duration;
import java.util.Objects;

/**
 * The fence around one call, independent of how the call was intercepted (Spring proxy, AspectJ weaving, or a
 * direct call in a test). A checking point takes the token bound for its effective resource and lets the store
 * check it atomically with the call; an acquiring point binds a freshly acquired token when none is bound. With a
 * {@link TokenVerifier}, a checking point first verifies the token's signature, and a forged one never reaches the
 * store. Each checking point follows the {@link FenceModes} of its resource: in
 * {@link dev.fencing.mode.FenceMode#OBSERVE} a missing, forged or rejected token, or an invalid key, is counted
 * ({@code enforced=false}),
 * recorded and logged, and the call runs anyway, a rejected one outside the store's fence; enforcing everywhere (the
 * default) costs one volatile read per call.
 * Thread-safe; one instance serves every fenced method.
 */
public final class FenceGuard {

    private static final System.Logger LOG = System.getLogger(FenceGuard.class.getName());

    /** The name of the observation of each check. */
    public static final String OBSERVATION = "fencing.check";

    /** The name of the observation of an acquiring point's wait for its lock. */
    public static final String ACQUIRE_OBSERVATION = "fencing.acquire";

    /**
     * The observed outcome of a check whose store judges at commit ({@link FencedCall#deferVerdict()}): the
     * {@code fencing.checks} counter gets the verdict later, when the store reaches it.
     */
    public static final String DEFERRED = "deferred";

    /** Acquire timeout used when none is configured. */
    public static final Duration DEFAULT_ACQUIRE_TIMEOUT = Duration.ofSeconds(10);

    private final FenceStore store;
    private final TokenIssuer issuer;
    private final Duration acquireTimeout;
    private final RejectionListener rejections;
    private final ObservationRegistry observations;
    private final LeaseScope leaseScope;
    private final TokenVerifier verifier;
    private final FenceModes modes;

    /**
     * @param store          where tokens are checked; required
     * @param issuer         where acquiring points get tokens; {@code null} when no method acquires
     * @param acquireTimeout how long an acquiring point waits for the lock
     */
    public FenceGuard(FenceStore store, TokenIssuer issuer, Duration acquireTimeout) {
        this(store, issuer, acquireTimeout, null);
    }

    /**
     * As {@link #FenceGuard(FenceStore, TokenIssuer, Duration)}, telling {@code rejections} of each rejected token
     * (called only when a check rejects, never on an accepted one).
     *
     * @param rejections told of each rejection; {@code null} for none
     */
    public FenceGuard(FenceStore store, TokenIssuer issuer, Duration acquireTimeout, RejectionListener rejections) {
        this(store, issuer, acquireTimeout, rejections, null, null, null, null);
    }

    /** Starts a builder for a guard checking tokens in {@code store}: the way to set every collaborator. */
    public static Builder builder(FenceStore store) {
        return new Builder(store);
    }

    private FenceGuard(FenceStore store, TokenIssuer issuer, Duration acquireTimeout, RejectionListener rejections,
                       ObservationRegistry observations, LeaseScope leaseScope, TokenVerifier verifier,
                       FenceModes modes) {
        this.verifier = verifier;
        this.modes = modes == null ? FenceModes.enforcing() : modes;
        this.observations = observations == null || observations.isNoop() ? null : observations;
        this.leaseScope = leaseScope == null ? LeaseScope.IMMEDIATE : leaseScope;
        this.rejections = rejections == null ? RejectionListener.NONE : rejections;
        this.store = Objects.requireNonNull(store, "store");
        this.issuer = issuer;
        this.acquireTimeout = Objects.requireNonNull(acquireTimeout, "acquireTimeout");
        if (acquireTimeout.isNegative()) {
            throw new FencingConfigurationException("acquireTimeout must not be negative, was " + acquireTimeout);
        }
        if (this.store.judgesAtCommit()) {
            String reason = "the fence store " + store.getClass().getName()
                    + (store instanceof RoutingFenceStore ? " routes it to a store that judges" : " judges")
                    + " tokens at commit (check-at-commit), after the write ran, so it cannot let a refused call "
                    + "through; observe mode needs a store that checks before the method body: the starter's store "
                    + "with fencing.store.jdbc.check-at-commit=false, a store of your own built with "
                    + "checkAtCommit(false)" + (store instanceof RoutingFenceStore ? ", or a route of the resource to "
                    + "such a store" : "");
            FenceStore judged = this.store;
            this.modes.refuseObserveWhere(judged::judgesAtCommit, reason);
            this.modes.validate();
        }
    }

    /** A guard without an issuer: every point must check, none may acquire. */
    public FenceGuard(FenceStore store) {
        this(store, null, DEFAULT_ACQUIRE_TIMEOUT);
    }

    /** The modes this guard checks in (enforce everywhere unless {@link Builder#modes} set others). */
    public FenceModes modes() {
        return modes;
    }

    /**
     * Fails when this guard cannot serve {@code point}; called once per point, at startup where possible.
     *
     * @throws FencingConfigurationException when the point acquires and no issuer is configured, or checks a
     *                                       resource the store does not guard ({@link FenceStore#unguarded})
     */
    public void validate(FencePoint point) {
        if (point.acquire() && issuer == null) {
            throw new FencingConfigurationException("@Fenced(acquire = true) on " + point.operation()
                    + " needs a TokenIssuer to acquire locks for resource '" + point.resource()
                    + "', and none is configured; provide a TokenIssuer bean (or pass one to the FenceGuard)");
        }
        String unguarded = point.acquire() ? null : store.unguarded(point.resource());
        if (unguarded != null) {
            throw new FencingConfigurationException("@Fenced on " + point.operation() + " checks resource '"
                    + point.resource() + "', which the fence store does not guard, so every call would be refused: "
                    + unguarded);
        }
    }

    /**
     * The fence of {@code point} as a bracket around a body its caller runs itself ({@link FenceBracket}: the path of
     * the proxy interceptor and the woven aspect, allocating nothing for an unkeyed point), or {@code null} when only
     * {@link #invoke} can fence it: the store is not a
     * {@link dev.fencing.store.BracketFenceStore}, checks are observed, or the point acquires. Call once per point and
     * keep the result.
     */
    public FenceBracket bracket(FencePoint point) {
        if (store instanceof dev.fencing.store.BracketFenceStore brackets && observations == null
                && !point.acquire()) {
            return FenceBracket.of(point, brackets, rejections, verifier, modes);
        }
        return null;
    }

    /**
     * Runs {@code call} under the fence described by {@code point}. In observe mode (see {@link Builder#modes}) the
     * missing, forged and rejected tokens and the invalid keys below are counted and the call runs instead.
     *
     * @throws MissingTokenException when a checking point finds no token bound (the call does not run)
     * @throws TokenRejectedException when the store rejects the token, as stale, duplicate or out of range, or the
     *                               verifier finds it forged ({@link ForgedTokenException}; the call does not run)
     * @throws InvalidKeyException   when the key cannot be computed, has no stable text or makes the effective
     *                               resource too long (the call does not run, no lock is taken)
     * @throws FenceStoreException   when the store fails before the call starts (the call does not run)
     */
    public <T> T invoke(FencePoint point, Object[] args, FencedCall<T> call) throws Throwable {
        return invoke(point, args, call, FencedCall::proceed);
    }

    /**
     * Runs {@code proceed.proceed(target)} under the fence described by {@code point}: {@link #invoke(FencePoint,
     * Object[], FencedCall)} for adapters that would otherwise capture their invocation in a lambda. With a
     * non-capturing {@code proceed} (an unbound method reference such as {@code MethodInvocation::proceed}) a fenced
     * call allocates nothing of its own once the JIT has inlined the store: the only per-call object, the write handed
     * to the store, does not escape.
     *
     * @throws MissingTokenException when a checking point finds no token bound (the call does not run)
     * @throws TokenRejectedException when the store rejects the token, as stale, duplicate or out of range, or the
     *                               verifier finds it forged ({@link ForgedTokenException}; the call does not run)
     * @throws InvalidKeyException   when the key cannot be computed, has no stable text or makes the effective
     *                               resource too long (the call does not run, no lock is taken)
     * @throws FenceStoreException   when the store fails before the call starts (the call does not run)
     */
    public <C, T> T invoke(FencePoint point, Object[] args, C target, Proceed<C, T> proceed) throws Throwable {
        Object key;
        try {
            key = point.keyOf(args);
        } catch (RuntimeException e) {
            if (CheckOutcomes.observedInvalidKey(point, modes, e)) {
                return proceed.proceed(target); // observe mode: enforce would refuse it, so it is counted and runs
            }
            throw invalidKey(point, e);
        }
        if (!point.acquire()) {
            return check(point, key, target, proceed);
        }
        String resource;
        try {
            resource = point.resourceOf(key);
        } catch (InvalidKeyException e) { // a key text no token can carry
            throw invalidKey(point, e);
        }
        return acquireOrPropagate(point, resource, target, proceed);
    }

    /**
     * Lets the store check the bound token and run the call. {@code accepted} is counted only once the store has
     * started the call; a failure before that is the store's ({@code error}, or {@code busy}/{@code conflict}).
     *
     * <p>The store gets a {@link StartedCall} made for this check alone and never stored by the guard, so no
     * thread-local state outlives a call (nothing pins this library's classes on a container's pooled threads); when
     * {@code store.fence} is inlined (the in-memory store is) it does not escape and the JIT scalar-replaces it. It is
     * closed when the check ends, so a store that kept it cannot run the write afterwards.
     */
    private <C, T> T check(FencePoint point, Object key, C target, Proceed<C, T> proceed) throws Throwable {
        FencingToken token;
        try {
            token = point.present(key);
        } catch (StaleTokenException lost) { // its lock is known lost here: refused before the store, as stale
            if (modes.observes(point.resource())) {
                // the verdict enforce mode gives, observed: stale, and the call runs outside the store's fence (the
                // store never judges a token whose lock is known lost: it could accept it and advance max_seen)
                FencingMetrics.increment(point.observedChecks().rejected(lost.verdict()));
                modes.observed().recordLockLost(point.operation(), point.resource(), lost.resource(), lost.presented());
                return proceed.proceed(target);
            }
            throw refused(point, lost.resource(), lost.presented(),
                    observation -> CheckOutcomes.lockLost(point, lost, rejections, observation));
        }
        // from here on the token's own instance of the effective resource's text, found without building it: its
        // hash is cached and the store's comparison of resource and token is one reference check; the text is built
        // only when no token is bound, for the message
        String resource;
        if (token != null) {
            resource = token.resource();
        } else {
            try {
                resource = point.resourceOf(key);
            } catch (InvalidKeyException e) { // a key text no token can carry
                if (CheckOutcomes.observedInvalidKey(point, modes, e)) {
                    return proceed.proceed(target);
                }
                throw invalidKey(point, e);
            }
        }
        if (modes.observes(point.resource())) {
            return observing(point, resource, token, target, proceed);
        }
        if (observations != null) {
            return observed(point, resource, token, target, proceed);
        }
        return check(point, resource, token, target, proceed, null);
    }

    /** Counts (and observes, as a check of the static resource with no token) a key that names no entity. */
    private RuntimeException invalidKey(FencePoint point, RuntimeException e) {
        return refused(point, point.resource(), null, observation -> {
            CheckOutcomes.outcome(observation, "invalid");
            return CheckOutcomes.invalidKey(point, e);
        });
    }

    /**
     * A refusal made before the store's check (a lost lock, an invalid key), counted by {@code refusal} and, with
     * observations, observed as a check of its own that ends with it: every outcome {@code fencing.checks} counts is
     * a {@code fencing.check} observation (and timer) too. Only on the refusal path, so its lambda costs nothing else.
     */
    private <E extends Throwable> E refused(FencePoint point, String resource, FencingToken token,
                                            java.util.function.Function<Observation, E> refusal) {
        if (observations == null) {
            return refusal.apply(null);
        }
        Observation observation = CheckOutcomes.observation(OBSERVATION, observations, point, resource);
        CheckOutcomes.token(observation, token);
        observation.start();
        E refused = refusal.apply(observation);
        observation.error(CheckOutcomes.forObservation(refused)); // never the holder id, as the key values
        observation.stop();
        return refused;
    }

    /** {@link #check} as an {@link Observation}, its outcome set where the counter is. */
    private <C, T> T observed(FencePoint point, String resource, FencingToken token, C target, Proceed<C, T> proceed)
            throws Throwable {
        Observation observation = CheckOutcomes.observation(OBSERVATION, observations, point, resource);
        CheckOutcomes.token(observation, token);
        observation.start();
        try (Observation.Scope ignored = observation.openScope()) {
            return check(point, resource, token, target, proceed, observation);
        } catch (Throwable t) {
            observation.error(CheckOutcomes.forObservation(t)); // never the holder id, as the key values
            throw t;
        } finally {
            if (observation.getContext().getLowCardinalityKeyValue("outcome") == null) {
                observation.lowCardinalityKeyValue("outcome", "error"); // failed before any outcome was set
            }
            observation.stop();
        }
    }

    private <C, T> T check(FencePoint point, String resource, FencingToken token, C target, Proceed<C, T> proceed,
                           Observation observation) throws Throwable {
        CheckOutcomes.presented(point, resource, token, verifier, rejections, observation);
        StartedCall<C, T> write = new StartedCall<>(target, proceed, point, resource, token, rejections, false);
        T result;
        try {
            result = store.fence(resource, token, write);
        } catch (Throwable t) {
            write.close();
            if (write.deferred) {
                // the verdict is the store's to report (it counted this failure, or none comes: the body failed)
                CheckOutcomes.outcome(observation, DEFERRED);
                throw t;
            }
            // only the flag leaves this method: the wrapper stays where it can be scalar-replaced
            throw CheckOutcomes.failed(point, resource, token, write.started, t, rejections, observation);
        }
        write.close();
        if (write.deferred) {
            CheckOutcomes.outcome(observation, DEFERRED); // counted when the store reaches its verdict
            return result;
        }
        if (!write.started) {
            throw CheckOutcomes.notStarted(point, resource, token);
        }
        CheckOutcomes.accepted(point, observation);
        return result;
    }

    /**
     * A check in observe mode: judged as in enforce mode and counted with {@code enforced=false}; a missing, forged or
     * rejected token is recorded, logged (rate-limited) and the call runs anyway, outside the store's fence (max_seen
     * is not advanced). A store failure is no verdict: it is thrown as in enforce mode, since the library cannot tell
     * whether the write would have been safe and a failing store is not what observe mode is there to find.
     */
    private <C, T> T observing(FencePoint point, String resource, FencingToken token, C target, Proceed<C, T> proceed)
            throws Throwable {
        CheckCounters checks = point.observedChecks();
        ObservedCalls record = modes.observed();
        if (token == null) {
            FencingMetrics.increment(checks.missing());
            record.record(point.operation(), point.resource(), "missing", true, resource, null, null);
            return proceed.proceed(target);
        }
        if (verifier != null && !verifier.verify(token).valid()) {
            FencingMetrics.increment(checks.forged());
            record.record(point.operation(), point.resource(), "forged", true, resource, token, null);
            return proceed.proceed(target);
        }
        StartedCall<C, T> write = new StartedCall<>(target, proceed, point, resource, token, rejections, true);
        T result;
        try {
            result = store.fence(resource, token, write);
        } catch (Throwable t) {
            write.close();
            if (!write.started && t instanceof TokenRejectedException e && e.presented() == token
                    && e.operation() == null) {
                FencingMetrics.increment(checks.rejected(e.verdict()));
                record.record(point.operation(), point.resource(), e.verdict().outcome(), true, resource, token,
                        e.maxSeen());
                return proceed.proceed(target); // outside the store's fence: max_seen stays where it was
            }
            if (write.started) {
                record.record(point.operation(), point.resource(), "accepted", false, resource, token, null);
            }
            throw CheckOutcomes.failed(point, checks, resource, token, write.started, t, rejections, null);
        }
        write.close();
        if (!write.started) {
            throw CheckOutcomes.notStarted(point, checks, resource, token);
        }
        CheckOutcomes.accepted(checks, null);
        record.record(point.operation(), point.resource(), "accepted", false, resource, token, null);
        return result;
    }

    private <C, T> T acquireOrPropagate(FencePoint point, String resource, C target, Proceed<C, T> proceed)
            throws Throwable {
        FencingToken lost = FencingContext.lostEnclosingLock();
        if (lost != null) {
            // nested in an acquiring call whose lock is known lost or given back: no fresh lock of its own (each write
            // fenced alone would still overwrite the new holder's work), and no run under the lost one
            throw CheckOutcomes.nestedUnderLostLock(point, resource, lost, rejections);
        }
        // only a lock this process holds is propagated; a token bound from a request header is for checks only
        if (FencingContext.currentLocal(resource) != null) {
            T result = proceed.proceed(target);
            TokenUse use = FencingContext.useOf(resource);
            if (use != null) {
                use.ranUnder(point); // nested under a lock held here: named, and judged, with the lock
            }
            return result;
        }
        FencingToken remote = FencingContext.current(resource);
        if (remote != null) {
            // a caller's token (header, message): acquiring would set it aside, and its stale request would land
            throw new RemoteTokenSetAsideException(resource, point.operation(), remote.value());
        }
        validate(point);
        Lease held = leaseScope.held(resource);
        if (held != null) {
            // this unit of work still holds the lock (its release waits for the commit): reuse it, never wait for it
            return underLease(point, held, held instanceof TrackedLease tracked ? tracked : null, target, proceed);
        }
        Lease lease;
        try {
            lease = observations == null ? issuer.acquire(resource, acquireTimeout)
                    : AcquisitionObservation.acquire(observations, point.resource(), point.operation(), issuer,
                            resource, acquireTimeout);
        } catch (RuntimeException e) {
            throw CheckOutcomes.acquireFailed(point, resource, e);
        }
        FencingToken lostMeanwhile = FencingContext.lostEnclosingLock();
        if (lostMeanwhile != null) {
            // the enclosing lock was found lost while this one was awaited (a resumed process: its session is
            // suspended while the lock service is asked again): give this one back, run nothing under it
            StaleTokenException refused = CheckOutcomes.nestedUnderLostLock(point, resource, lostMeanwhile,
                    rejections);
            try {
                lease.close(); // now, not at a transaction's end: nothing ran under it
            } catch (RuntimeException e) {
                refused.addSuppressed(e);
            }
            throw refused;
        }
        FencingMetrics.increment(point.acquisitions().acquired());
        Throwable failure = null;
        Lease released = lease;
        try {
            TrackedLease tracked = new TrackedLease(lease, CheckOutcomes.leaseToken(point, resource, lease));
            released = tracked;
            return underLease(point, tracked, tracked, target, proceed);
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            release(released, failure);
        }
    }

    /**
     * Runs the call with {@code lease}'s token bound; with {@code tracked}, bound with its {@link TrackedLease#use},
     * so the checks below mark it, and marked as returned when the call returns normally.
     */
    private static <C, T> T underLease(FencePoint point, Lease lease, TrackedLease tracked, C target,
                                       Proceed<C, T> proceed) throws Throwable {
        if (tracked == null) {
            try (FencingScope ignored = FencingContext.bind(lease.token())) {
                return proceed.proceed(target);
            }
        }
        T result;
        try (FencingScope ignored = FencingContext.bindAcquired(tracked.token(), tracked.use)) {
            result = proceed.proceed(target);
        }
        tracked.returned(point);
        return result;
    }

    /**
     * Releases the lease of an acquiring call. A release that fails after the call returned is logged at WARNING, not
     * thrown: the call's write is done (committed, when it ran in its own transaction), and an exception now would
     * tell the caller it failed; the lock service frees the lock when the lease expires. After a failed call it is
     * added to that call's exception.
     */
    private void release(Lease lease, Throwable failure) {
        try {
            leaseScope.release(lease);
        } catch (RuntimeException e) {
            if (failure != null) {
                failure.addSuppressed(e);
            } else {
                LOG.log(System.Logger.Level.WARNING, () -> "Could not release the lock on '"
                        + lease.token().resource() + "' after its fenced call returned (the call's result stands); "
                        + "the lock service frees it when the lease expires: " + e); // expected in an outage: no trace
            }
        }
    }

    /**
     * Builds a {@link FenceGuard}. Only the store is required; without an issuer no point may acquire.
     */
    public static final class Builder {
        private final FenceStore store;
        private TokenIssuer issuer;
        private Duration acquireTimeout = DEFAULT_ACQUIRE_TIMEOUT;
        private RejectionListener rejections;
        private ObservationRegistry observations;
        private LeaseScope leaseScope;
        private TokenVerifier verifier;
        private FenceModes modes;

        private Builder(FenceStore store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /** Where acquiring points get tokens; {@code null} (the default) when no method acquires. */
        public Builder issuer(TokenIssuer issuer) {
            this.issuer = issuer;
            return this;
        }

        /** How long an acquiring point waits for the lock; {@link #DEFAULT_ACQUIRE_TIMEOUT} by default. */
        public Builder acquireTimeout(Duration acquireTimeout) {
            this.acquireTimeout = Objects.requireNonNull(acquireTimeout, "acquireTimeout");
            return this;
        }

        /** Told of each rejected token, never of an accepted one; none by default. */
        public Builder rejectionListener(RejectionListener rejections) {
            this.rejections = rejections;
            return this;
        }

        /**
         * Makes each check an {@link Observation} named {@value #OBSERVATION}: a span when tracing is on, a timer when
         * a meter handler is registered. Its low-cardinality key values are {@code resource} (the annotation's static
         * name) and {@code outcome} (the {@code fencing.checks} outcome); the effective resource, the token's value and
         * the method are high-cardinality ones (spans only); holder ids are never recorded. {@code null} or a no-op
         * registry (the default): nothing is created per call. An acquiring point's wait for its lock is an
         * observation too, named {@value #ACQUIRE_OBSERVATION}, with {@code resource} and {@code outcome} (acquired |
         * failed) as low-cardinality key values.
         */
        public Builder observations(ObservationRegistry observations) {
            this.observations = observations;
            return this;
        }

        /** When acquiring points give their locks back; {@link LeaseScope#IMMEDIATE} by default. */
        public Builder leaseScope(LeaseScope leaseScope) {
            this.leaseScope = leaseScope;
            return this;
        }

        /**
         * Verifies each checked token's signature before the store sees it; {@code null} (the default): tokens are
         * not verified. A token that is unsigned or fails verification is refused with a
         * {@link ForgedTokenException}, counted as {@code forged} and reported to the rejection listener; max_seen is
         * untouched. Acquiring points bind their lease's token unverified (sign it with a
         * {@link dev.fencing.signing.SigningTokenIssuer} so the checks below them accept it).
         */
        public Builder verifier(TokenVerifier verifier) {
            this.verifier = verifier;
            return this;
        }

        /**
         * The mode of each resource's checks, switchable at runtime through the same object; {@code null} (the
         * default): enforce everywhere. In {@link dev.fencing.mode.FenceMode#OBSERVE} a checking point judges as in
         * enforce mode, counts with {@code enforced=false}, records the call in {@link FenceModes#observed()} and lets
         * it run even when the token is missing, forged or rejected, or the key names no entity (then outside the
         * store's fence, max_seen untouched). Acquiring points are not affected.
         */
        public Builder modes(FenceModes modes) {
            this.modes = modes;
            return this;
        }

        /**
         * @throws FencingConfigurationException when the acquire timeout is negative, or the modes observe a resource
         *                                       and the store judges at commit ({@link FenceStore#judgesAtCommit()})
         */
        public FenceGuard build() {
            return new FenceGuard(store, issuer, acquireTimeout, rejections, observations, leaseScope, verifier,
                    modes);
        }
    }

    /**
     * The fenced method's body as an adapter sees it: {@code proceed(target)} runs it. Pass a non-capturing function
     * (an unbound method reference) and the invocation as {@code target}.
     *
     * @param <C> the adapter's invocation type
     * @param <T> the result type
     */
    @FunctionalInterface
    public interface Proceed<C, T> {

        /** Runs the call that {@code target} stands for; any exception passes through unchanged. */
        T proceed(C target) throws Throwable;
    }

    /**
     * The guarded call as handed to the store for one check, remembering whether the store started it. Closed when
     * the check ends: a store that kept it and runs it later gets an {@link IllegalStateException}, the write does not
     * run. Confined to the checking thread's stack; never stored by the guard.
     */
    private static final class StartedCall<C, T> implements FencedCall<T> {
        private C target;
        private Proceed<C, T> proceed;
        private final FencePoint point;
        private final String resource;
        private final FencingToken token;
        private final RejectionListener rejections;
        private final boolean observing;
        boolean started;
        boolean deferred;

        StartedCall(C target, Proceed<C, T> proceed, FencePoint point, String resource, FencingToken token,
                    RejectionListener rejections, boolean observing) {
            this.observing = observing;
            this.target = target;
            this.proceed = proceed;
            this.point = point;
            this.resource = resource;
            this.token = token;
            this.rejections = rejections;
        }

        /** The store judges after returning: the verdict object, allocated only then, counts the check. */
        @Override
        public DeferredVerdict deferVerdict() {
            if (proceed == null) {
                throw new IllegalStateException("The fence store deferred its verdict after its check returned");
            }
            if (observing) {
                // fail closed: the write would run before a verdict that could not let it through
                throw new FenceStoreException(resource, token, "The fence store of resource '" + resource
                        + "' judges at commit, which observe mode cannot work with; " + point.operation()
                        + " did not run. Set resource '" + point.resource() + "' to enforce", null);
            }
            deferred = true;
            return new GuardVerdict(point, resource, token, rejections);
        }

        @Override
        public boolean continuesAfterRejection() {
            return observing;
        }

        @Override
        public T proceed() throws Throwable {
            Proceed<C, T> current = proceed;
            if (current == null) {
                throw new IllegalStateException("The fence store ran the guarded write after its check returned");
            }
            started = true;
            return current.proceed(target);
        }

        /**
         * Ends the check: the write can no longer be run through this object. Only the function is cleared; clearing
         * {@code target} as well costs the scalar replacement of this object on a Spring proxy (JDK 17 C2, measured:
         * +24 B per call), and without the function the target cannot be run from here.
         */
        void close() {
            proceed = null;
        }
    }

    /**
     * A verdict reached after the guard returned (at commit), counted and reported as the guard would have: once,
     * the first outcome reported wins.
     */
    private static final class GuardVerdict implements DeferredVerdict {
        private final FencePoint point;
        private final String resource;
        private final FencingToken token;
        private final RejectionListener rejections;
        private boolean reported;

        GuardVerdict(FencePoint point, String resource, FencingToken token, RejectionListener rejections) {
            this.point = point;
            this.resource = resource;
            this.token = token;
            this.rejections = rejections;
        }

        @Override
        public synchronized void accepted() {
            if (!reported) {
                reported = true;
                CheckOutcomes.accepted(point, null);
            }
        }

        @Override
        public synchronized RuntimeException failed(RuntimeException failure) {
            if (reported) {
                return failure;
            }
            reported = true;
            Throwable named = CheckOutcomes.failed(point, resource, token, false, failure, rejections, null);
            return named instanceof RuntimeException runtime ? runtime : failure;
        }
    }
}

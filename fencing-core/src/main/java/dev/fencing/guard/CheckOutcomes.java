package dev.fencing.guard;

import dev.fencing.FencingException;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.metrics.CheckCounters;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.mode.FenceModes;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.Verification;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * Internal: public for the reactive guard (fencing-reactor), not for applications.
 * What a check's outcome counts as, in one place for every guard: a failure of the store's fence is a rejection of
 * the presented token (counted by verdict and told to the rejection listener), a transient failure, a store error,
 * or, once the write has started, the write's own failure (the check accepted). The blocking {@link FenceGuard} and
 * the reactive guard both classify through here, so they count and report alike.
 */
public final class CheckOutcomes {

    /**
     * Loads {@link Observation} with the first check, observed or not. The check path's methods name it in their
     * signatures, and HotSpot's C2 does not inline a method whose signature names a class not yet loaded: in an
     * application that never creates an observation, every call of those methods stayed a call of its own (seen with
     * {@code -XX:+PrintInlining}: "unloaded signature classes").
     */
    private static final Class<?> OBSERVATION_LOADED = Observation.class;

    private CheckOutcomes() {
    }

    /** Sets the observed outcome, when the check is observed ({@code observation} not {@code null}). */
    public static void outcome(Observation observation, String outcome) {
        if (observation != null) {
            observation.lowCardinalityKeyValue("outcome", outcome);
        }
    }

    /** Counts an accepted check. */
    public static void accepted(FencePoint point, Observation observation) {
        accepted(point.checks(), observation);
    }

    /** Counts an accepted check in {@code checks} (enforced or observed). */
    public static void accepted(CheckCounters checks, Observation observation) {
        FencingMetrics.increment(checks.accepted());
        outcome(observation, "accepted");
    }

    /**
     * Counts a check that found no token bound for {@code resource} (the effective one, {@code accounts:8}), and logs
     * it (paced) naming that resource, as the exception does.
     */
    public static void missing(FencePoint point, String resource, Observation observation) {
        FencingMetrics.increment(point.checks().missing());
        outcome(observation, "missing");
        RefusalLog.missing(point.operation(), resource);
    }

    /**
     * Refuses a checking point's presented {@code token} when it is missing or, with a {@code verifier}, fails
     * verification (counted and reported); returns normally when the store may judge it. The blocking guard and the
     * bracket both start a check here.
     *
     * @throws MissingTokenException when no token is bound
     * @throws ForgedTokenException  when the token fails verification
     */
    static void presented(FencePoint point, String resource, FencingToken token, TokenVerifier verifier,
                          RejectionListener rejections, Observation observation) {
        if (token == null) {
            missing(point, resource, observation);
            throw new MissingTokenException(resource, point.operation(), FencingContext.snapshot().keySet());
        }
        if (verifier != null) {
            Verification verification = verifier.verify(token); // cached per token instance
            if (!verification.valid()) {
                throw forged(point, resource, token, verification, rejections, observation);
            }
        }
    }

    /**
     * {@link FencePoint#resourceOf} of a checked {@code key}, a key text no token can carry counted {@code invalid}.
     *
     * @throws InvalidKeyException when the key's text has a character no token's resource may have
     */
    static String resourceOf(FencePoint point, Object key) {
        try {
            return point.resourceOf(key);
        } catch (InvalidKeyException e) {
            throw invalidKey(point, e);
        }
    }

    /**
     * Counts a key that could not name an entity and returns what to fail with: {@code e} itself when it is a library
     * exception, else an {@link InvalidKeyException} around it.
     */
    public static RuntimeException invalidKey(FencePoint point, RuntimeException e) {
        FencingMetrics.increment(point.checks().invalid());
        return asInvalidKey(point, e);
    }

    private static RuntimeException asInvalidKey(FencePoint point, RuntimeException e) {
        if (e instanceof FencingException) {
            return e;
        }
        return new InvalidKeyException(point.resource(), "Fencing key of " + point.operation()
                + " could not be evaluated: " + e.getMessage(), e);
    }

    /**
     * Whether the call of {@code point} whose key failed with {@code e} runs, unfenced: {@code true} for a checking
     * point in observe mode, which counts it {@code invalid} with {@code enforced=false} and records and logs it, as
     * it does every refusal enforce mode would make; {@code false} otherwise (refuse it: {@link #invalidKey}). An
     * acquiring point never runs without its lock.
     */
    public static boolean observedInvalidKey(FencePoint point, FenceModes modes, RuntimeException e) {
        if (point.acquire() || !modes.observes(point.resource())) {
            return false;
        }
        FencingMetrics.increment(point.observedChecks().invalid());
        modes.observed().recordInvalid(point.operation(), point.resource(), asInvalidKey(point, e).getMessage());
        return true;
    }

    /**
     * Counts a store that finished without starting the write and without a verdict, and returns the error to fail
     * with (fail closed: the write did not run, so it is refused).
     */
    public static FenceStoreException notStarted(FencePoint point, String resource, FencingToken token) {
        return notStarted(point, point.checks(), resource, token);
    }

    /** As {@link #notStarted(FencePoint, String, FencingToken)}, counted in {@code checks}. */
    public static FenceStoreException notStarted(FencePoint point, CheckCounters checks, String resource,
                                                 FencingToken token) {
        FenceStoreException refused = new FenceStoreException(resource, token, "Fence store returned without "
                + "running the write of " + point.operation() + " for resource '" + resource
                + "' and without a verdict; refusing", null);
        checks.error().increment(refused);
        return refused;
    }

    /**
     * A not yet started observation named {@code name} of {@code point}'s check ({@link FenceGuard#OBSERVATION}) or
     * wait for its lock ({@link FenceGuard#ACQUIRE_OBSERVATION}), as every guard makes it: contextual name
     * {@code "fence <resource>"} or {@code "acquire <resource>"}, the static resource as low-cardinality key value,
     * the effective resource and the method as high-cardinality ones. No outcome yet: a meter handler tags what it
     * starts with the key values it has then (its {@code .active} timer), and a placeholder would show every running
     * one as an error.
     */
    public static Observation observation(String name, ObservationRegistry observations, FencePoint point,
                                          String resource) {
        return observation(name, observations, point.resource(), resource, point.operation());
    }

    /** The same for a check or wait of {@code operation} tagged {@code tag} (a static resource or a family). */
    static Observation observation(String name, ObservationRegistry observations, String tag, String resource,
                                   String operation) {
        return Observation.createNotStarted(name, observations)
                .contextualName((FenceGuard.OBSERVATION.equals(name) ? "fence " : "acquire ") + tag)
                .lowCardinalityKeyValue("resource", tag)
                .highCardinalityKeyValue("fencing.resource", resource)
                .highCardinalityKeyValue("fencing.method", operation);
    }

    /** Sets the observed token's value ({@code none} without one), when the check or wait is observed. */
    public static void token(Observation observation, FencingToken token) {
        if (observation != null) {
            observation.highCardinalityKeyValue("fencing.token", token == null ? "none" : Long.toString(token.value()));
        }
    }

    /** Sets an observed wait's outcome to {@code acquired}, with the lease's token. */
    public static void acquired(Observation observation, Lease lease) {
        outcome(observation, "acquired");
        token(observation, lease == null ? null : lease.token());
    }

    /** The holder an observation's error names instead of the presented one. */
    static final String UNRECORDED_HOLDER = "not-recorded";

    /**
     * What an observation (a trace span) is told of a failed check: a refusal as the same exception, its stack trace
     * kept, but with the holder id left out (an observation records no holder id: tracing backends are read by more
     * people than the application's own answers); a lock not acquired by its kind and its cause's, never their
     * messages (an issuer's timeout may name the holder); anything else as it is.
     */
    public static Throwable forObservation(Throwable t) {
        if (t instanceof LockAcquisitionException notAcquired) {
            return AcquisitionObservation.withoutMessage(notAcquired.resource(), null, notAcquired);
        }
        if (!(t instanceof TokenRejectedException e) || e.presented() == null) {
            return t;
        }
        try {
            return withoutHolder(e);
        } catch (RuntimeException unexpected) {
            // never the holder, and never a failure of this copy in place of the refusal the caller gets
            return new IllegalStateException(e.getClass().getSimpleName() + " for resource '"
                    + FencingToken.printable(e.resource()) + "'");
        }
    }

    private static Throwable withoutHolder(TokenRejectedException e) {
        FencingToken presented = new FencingToken(e.presented().resource(), e.presented().value(), UNRECORDED_HOLDER);
        TokenRejectedException copy;
        if (e instanceof StaleTokenException stale) {
            FencingToken around = stale.enclosingLock() == null ? null : new FencingToken(
                    stale.enclosingLock().resource(), stale.enclosingLock().value(), UNRECORDED_HOLDER);
            copy = around != null && stale.presented() == stale.enclosingLock()
                    ? StaleTokenException.nestedAcquireRefused(e.resource(), around, e.operation())
                    : around != null ? StaleTokenException.enclosingLockLost(e.resource(), presented, around,
                    e.operation())
                    : stale.lockLost() ? StaleTokenException.lockLost(e.resource(), presented, e.operation())
                    : new StaleTokenException(e.resource(), presented, e.maxSeen(), e.operation());
        } else if (e instanceof DuplicateTokenException) {
            copy = new DuplicateTokenException(e.resource(), presented, e.maxSeen(), e.operation());
        } else if (e instanceof OutOfRangeTokenException) {
            copy = new OutOfRangeTokenException(e.resource(), presented, e.maxSeen(), e.operation());
        } else if (e instanceof ForgedTokenException forged) {
            copy = new ForgedTokenException(e.resource(), presented, forged.reason(), e.operation());
        } else {
            // a refusal of another kind: its message may name the holder, so only its kind is told
            return new IllegalStateException(e.getClass().getSimpleName() + " for resource '"
                    + FencingToken.printable(e.resource()) + "'");
        }
        copy.setStackTrace(e.getStackTrace());
        return copy;
    }

    /**
     * Counts and reports a token that failed verification; the store never sees it. The guard is the one place the
     * library verifies signatures in front of a store: it knows the operation, the counters and the listener, which
     * a store decorator would not.
     */
    public static ForgedTokenException forged(FencePoint point, String resource, FencingToken token,
                                              Verification verification, RejectionListener rejections,
                                              Observation observation) {
        ForgedTokenException forged = new ForgedTokenException(resource, token, verification.reason(token),
                point.operation());
        FencingMetrics.increment(point.checks().forged());
        outcome(observation, "forged");
        tell(rejections, forged);
        RefusalLog.refused(point.operation(), forged);
        return forged;
    }

    /**
     * Counts the refusal of a token whose lock this process knows is lost ({@link StaleTokenException#lockLost()},
     * raised where the check presented it): {@code stale}, reported and logged as a store's refusal, and returned
     * named after the point's operation.
     */
    public static StaleTokenException lockLost(FencePoint point, StaleTokenException lost,
                                               RejectionListener rejections, Observation observation) {
        return (StaleTokenException) failed(point, lost.resource(), lost.presented(), false, lost, rejections,
                observation);
    }

    /**
     * Counts a check whose store fence failed with {@code t} and returns what to fail with in its place.
     *
     * @param started whether the store had started the write when {@code t} was raised
     */
    public static Throwable failed(FencePoint point, String resource, FencingToken token, boolean started,
                                   Throwable t, RejectionListener rejections, Observation observation) {
        return failed(point, point.checks(), resource, token, started, t, rejections, observation);
    }

    /** As {@link #failed(FencePoint, String, FencingToken, boolean, Throwable, RejectionListener, Observation)},
     * counted in {@code checks} (enforced or observed). */
    public static Throwable failed(FencePoint point, CheckCounters checks, String resource, FencingToken token,
                                   boolean started, Throwable t, RejectionListener rejections,
                                   Observation observation) {
        if (t instanceof TokenRejectedException e) {
            if (started || e.presented() != token || e.operation() != null) {
                // raised by a nested fenced call (counted and named there; this check had accepted), or a store
                // that rejected a token other than the one presented before the write started: an error
                if (started) {
                    accepted(checks, observation);
                } else {
                    checks.error().increment(e);
                }
                return e;
            }
            FencingMetrics.increment(checks.rejected(e.verdict()));
            outcome(observation, e.verdict().outcome());
            TokenRejectedException named = e.at(point.operation());
            tell(rejections, named);
            if (checks == point.checks()) { // enforced: observed refusals are logged by ObservedCalls
                RefusalLog.refused(point.operation(), named);
            }
            return named;
        }
        if (t instanceof TransientFenceFailure transientFailure && transientFailure.presented() == token) {
            // this check could not run (lock wait bound, serialization failure, deadlock): retryable
            FencingMetrics.increment(checks.failed(transientFailure.reason()));
            outcome(observation, transientFailure.reason() == TransientFenceFailure.Reason.BUSY ? "busy" : "conflict");
            return t;
        }
        if (t instanceof FenceStoreException e && e.presented() == token) {
            checks.error().increment(e); // this check (or its commit) failed
            // a setup mistake: the log line it ends up in names the method to fix
            return !started && t instanceof OutsideTransactionException outside ? outside.at(point.operation()) : t;
        }
        if (started) {
            // the store accepted and the call itself (or a nested fenced call, counted there) threw
            accepted(checks, observation);
            return t;
        }
        checks.error().increment(t);
        if (t instanceof FencingException || !(t instanceof Exception)) {
            return t;
        }
        return new FenceStoreException(resource, token, "Fence store failed before the write of "
                + point.operation() + " started, for resource '" + resource + "': " + t, t);
    }

    /**
     * What an acquisition's observation is told of {@code e}, a failed acquisition: its kind and its cause's, never
     * their messages, which may name the lock's holder.
     */
    public static Throwable acquisitionForObservation(FencePoint point, String resource, Throwable e) {
        return AcquisitionObservation.withoutMessage(resource, point.operation(), e);
    }

    /**
     * Counts a failed acquisition and returns what to fail with: {@code e} itself when it is a library exception,
     * else a {@link LockAcquisitionException} around it naming the resource and the method.
     */
    public static RuntimeException acquireFailed(FencePoint point, String resource, RuntimeException e) {
        point.acquisitions().failed().increment(e);
        if (e instanceof FencingException) {
            return e;
        }
        return new LockAcquisitionException(resource, "Could not acquire the lock on '" + resource + "' for "
                + point.operation() + ": " + e, e);
    }

    /**
     * Counts (a failed acquisition), reports and logs an acquiring call of {@code resource} refused before its lock
     * service was asked, because it runs inside an acquiring call whose lock, {@code lost}, is known lost or given
     * back here, and returns the refusal to throw.
     */
    public static StaleTokenException nestedUnderLostLock(FencePoint point, String resource, FencingToken lost,
                                                          RejectionListener rejections) {
        StaleTokenException refused = StaleTokenException.nestedAcquireRefused(resource, lost, point.operation());
        point.acquisitions().failed().increment(refused);
        tell(rejections, refused);
        RefusalLog.nestedAcquire(point.operation(), resource, lost);
        return refused;
    }

    /**
     * The token of {@code lease}, acquired for {@code resource}.
     *
     * @throws FencingException when the issuer returned no token, or one for another resource
     */
    public static FencingToken leaseToken(FencePoint point, String resource, Lease lease) {
        FencingToken token = lease.token();
        if (token == null || !resource.equals(token.resource())) {
            throw new FencingException("Token issuer returned " + token + " for a lock on resource '"
                    + resource + "' in " + point.operation() + "; refusing to bind it");
        }
        return token;
    }

    private static void tell(RejectionListener rejections, TokenRejectedException rejection) {
        try {
            rejections.rejected(rejection);
        } catch (RuntimeException ignored) {
            // the listener is advisory; the rejection is what the caller gets
        }
    }
}

package dev.fencing.guard;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.token.FencingToken;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

import java.time.Duration;

/**
 * One wait for a lock, observed as an acquiring {@code @Fenced} method's is: an {@link Observation} named
 * {@value FenceGuard#ACQUIRE_OBSERVATION}, current on the waiting thread until {@link #close()} (a lease table's
 * statements, a lock service client's spans are its children), with a low-cardinality {@code resource} (a static
 * resource or a family, never an entity) and {@code outcome}. The guard's acquiring methods are observed with it, and
 * so can other acquirers be, such as a ShedLock job's lease or a lock registry's lock; without an
 * {@link ObservationRegistry}, or with a no-op one, nothing is made.
 *
 * <p>Used on one thread: {@link #start}, at most one of {@link #acquired}, {@link #failed} and {@link #cancelled},
 * then {@link #close()}. Closed with none, the wait counts as {@code failed}. A failure is recorded without its
 * message, which may name the lock's holder.
 */
public final class AcquisitionObservation implements AutoCloseable {

    private static final AcquisitionObservation NONE = new AcquisitionObservation(null, null, null, null);

    private final Observation observation;
    private final Observation.Scope scope;
    private final String resource;
    private final String acquirer;
    private boolean ended;

    private AcquisitionObservation(Observation observation, Observation.Scope scope, String resource,
                                   String acquirer) {
        this.observation = observation;
        this.scope = scope;
        this.resource = resource;
        this.acquirer = acquirer;
    }

    /**
     * Starts observing a wait for {@code resource}'s lock and makes it current on this thread.
     *
     * @param observations where to observe; {@code null} or a no-op registry for nowhere
     * @param tag          the {@code resource} key value: {@code resource}'s family, or its static name
     * @param resource     the resource whose lock is awaited ({@code fencing.resource}, on spans only)
     * @param acquirer     what waits, such as {@code "ShedLock job 'nightly'"} ({@code fencing.method}, on spans only)
     */
    public static AcquisitionObservation start(ObservationRegistry observations, String tag, String resource,
                                               String acquirer) {
        if (observations == null || observations.isNoop()) {
            return NONE;
        }
        Observation observation = CheckOutcomes.observation(FenceGuard.ACQUIRE_OBSERVATION, observations, tag,
                resource, acquirer).start();
        return new AcquisitionObservation(observation, observation.openScope(), resource, acquirer);
    }

    /**
     * One call of {@code issuer} for {@code resource}'s lock, observed: started, told its outcome and closed here.
     *
     * @see #start
     */
    public static Lease acquire(ObservationRegistry observations, String tag, String acquirer, TokenIssuer issuer,
                                String resource, Duration timeout) {
        try (AcquisitionObservation wait = start(observations, tag, resource, acquirer)) {
            Lease lease;
            try {
                lease = issuer.acquire(resource, timeout);
            } catch (RuntimeException | Error e) {
                wait.failed(e);
                throw e;
            }
            wait.acquired(lease == null ? null : lease.token());
            return lease;
        }
    }

    /** The lock was granted, with {@code token}: {@code outcome=acquired}. */
    public void acquired(FencingToken token) {
        if (observation != null && !ended) {
            ended = true;
            CheckOutcomes.outcome(observation, "acquired");
            CheckOutcomes.token(observation, token);
        }
    }

    /** The wait failed with {@code failure}, which goes to the caller: {@code outcome=failed}, its kind recorded. */
    public void failed(Throwable failure) {
        if (observation != null && !ended) {
            ended = true;
            CheckOutcomes.outcome(observation, "failed");
            observation.error(withoutMessage(resource, acquirer, failure));
        }
    }

    /** The waiting thread was interrupted and gave up: {@code outcome=cancelled}, no error. */
    public void cancelled() {
        if (observation != null && !ended) {
            ended = true;
            CheckOutcomes.outcome(observation, "cancelled");
        }
    }

    /** Stops the observation (and its scope on this thread); a wait told no outcome counts as failed. */
    @Override
    public void close() {
        if (observation == null) {
            return;
        }
        if (!ended) {
            ended = true;
            CheckOutcomes.outcome(observation, "failed");
        }
        scope.close();
        observation.stop();
    }

    /**
     * What the observation is told of a failed acquisition: its kind and the kind of its cause, not their messages
     * (an in-memory issuer's timeout names the holder, as the caller's own answer may); {@code operation} is the
     * method, or {@code null} where it is not known.
     */
    static Throwable withoutMessage(String resource, String operation, Throwable e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        String kind = cause == e ? e.getClass().getName() : e.getClass().getName() + " caused by "
                + cause.getClass().getName();
        LockAcquisitionException told = new LockAcquisitionException(resource, "Could not acquire the lock on '"
                + FencingToken.printable(resource) + "'" + (operation == null ? "" : " for " + operation) + ": "
                + kind + " (its message is not recorded: it may name the lock's holder)");
        told.setStackTrace(e.getStackTrace());
        return told;
    }
}

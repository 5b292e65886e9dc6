package dev.fencing.guard;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.token.FencingToken;
import io.micrometer.observation.ObservationRegistry;

import java.time.Duration;

/**
 * An acquiring point's wait for its lock as an {@link Observation} named {@value FenceGuard#ACQUIRE_OBSERVATION}, so
 * that time spent waiting for a lock shows as a span (and a timer) of its own instead of inside the caller's. It is
 * current while the issuer works (the issuer's own spans, a lease table's statements, are its children) and stops
 * before the fenced call runs. Its error never carries the issuer's message, which may name the lock's holder.
 */
final class ObservedAcquisition {

    private ObservedAcquisition() {
    }

    static Lease acquire(ObservationRegistry observations, TokenIssuer issuer, FencePoint point, String resource,
                         Duration timeout) {
        try (AcquisitionObservation wait = AcquisitionObservation.start(observations, point.resource(), resource,
                point.operation())) {
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

package dev.fencing.issuer;

import dev.fencing.FencingException;

/**
 * A lock that could not be acquired: timed out, interrupted, or the lock service is unreachable; or, not
 * {@linkplain #retryable() retryable}, the lock service's setup is broken (a lease table dropped at runtime) so that
 * no retry can succeed until it is repaired. No token was bound and the guarded method did not run.
 */
public class LockAcquisitionException extends FencingException {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final boolean retryable;

    public LockAcquisitionException(String resource, String message) {
        super(message);
        this.resource = resource;
        this.retryable = true;
    }

    public LockAcquisitionException(String resource, String message, Throwable cause) {
        this(resource, message, cause, true);
    }

    /**
     * @param retryable {@code false} when no retry can succeed until the lock service's setup is repaired (the
     *                  message says how): an HTTP caller then gets a 500, not a 503 asking it to retry later
     */
    public LockAcquisitionException(String resource, String message, Throwable cause, boolean retryable) {
        super(message, cause);
        this.resource = resource;
        this.retryable = retryable;
    }

    /**
     * Whether a later attempt may succeed (a holder, a timeout, an outage); {@code false} for a broken setup that
     * fails every acquisition until repaired.
     */
    public boolean retryable() {
        return retryable;
    }

    /** The resource whose lock was not acquired. */
    public String resource() {
        return resource;
    }
}

package dev.fencing.issuer;

import dev.fencing.FencingException;

/**
 * A lock that could not be acquired: timed out, interrupted, or the lock service is unreachable. No token was
 * bound and the guarded method did not run.
 */
public class LockAcquisitionException extends FencingException {

    private static final long serialVersionUID = 1L;

    private final String resource;

    public LockAcquisitionException(String resource, String message) {
        super(message);
        this.resource = resource;
    }

    public LockAcquisitionException(String resource, String message, Throwable cause) {
        super(message, cause);
        this.resource = resource;
    }

    /** The resource whose lock was not acquired. */
    public String resource() {
        return resource;
    }
}

package dev.fencing.verify.cluster;

/** A lock service did not start, or a member did not come back, within its bounded wait. */
public class LockServiceException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public LockServiceException(String message) {
        super(message);
    }

    public LockServiceException(String message, Throwable cause) {
        super(message, cause);
    }
}

package dev.fencing.recovery;

import dev.fencing.FencingException;

/**
 * A {@link MaxSeenReset} that was refused for a reason the operator can change: a lease on the resource is held (retry
 * when it is released, or force), an explicit value was given without the override, no issuer is known to bound
 * the reset, or the store could not keep its checks out in time to forget the resource (retry). Nothing changed.
 */
public final class ResetRefusedException extends FencingException {

    private static final long serialVersionUID = 1L;

    private final String resource;

    public ResetRefusedException(String resource, String message) {
        super(message);
        this.resource = resource;
    }

    /** A refusal caused by {@code cause} (a lock the store could not get in time). */
    public ResetRefusedException(String resource, String message, Throwable cause) {
        super(message, cause);
        this.resource = resource;
    }

    /** The resource whose reset was refused. */
    public String resource() {
        return resource;
    }
}

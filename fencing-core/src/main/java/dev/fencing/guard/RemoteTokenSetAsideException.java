package dev.fencing.guard;

import dev.fencing.FencingException;

/**
 * A {@code @Fenced(acquire = true)} call, or a lock of a lock registry (Spring Integration's {@code LockRegistry}),
 * taken while a caller's token for the same resource is bound as remote (from a {@code Fencing-Token} HTTP or message
 * header). Acquiring would set the caller's token aside and fence the write with a fresh one, so a zombie caller's
 * stale request would be applied: the call is refused before any lock is taken.
 */
public class RemoteTokenSetAsideException extends FencingException {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final long presentedValue;

    /** Refuses the acquiring {@code @Fenced} method named by {@code operation}. */
    public RemoteTokenSetAsideException(String resource, String operation, long presentedValue) {
        this(resource, presentedValue, "The caller sent a fencing token for resource '" + resource + "' (value "
                + presentedValue + "), but " + operation + " is @Fenced(acquire = true) and would take its own lock, "
                + "setting the caller's token aside (a stale caller's write would then be applied): remove acquire = "
                + "true from it so that its checks present the caller's token, or let the caller send no token for '"
                + resource + "'");
    }

    private RemoteTokenSetAsideException(String resource, long presentedValue, String message) {
        super(message);
        this.resource = resource;
        this.presentedValue = presentedValue;
    }

    /** Refuses taking the lock that {@code lock} names (a registry's lock on {@code resource}). */
    public static RemoteTokenSetAsideException forLock(String resource, String lock, long presentedValue) {
        return new RemoteTokenSetAsideException(resource, presentedValue, "The caller sent a fencing token for "
                + "resource '" + resource + "' (value " + presentedValue + "), but " + lock + " was asked to take a "
                + "lock of its own on it, which would set the caller's token aside (a stale caller's write would "
                + "then be applied under the fresh lock): write with the caller's token instead (the fenced writes "
                + "present it without a lock), or let the caller send no token for '" + resource + "'");
    }

    /** The effective resource both the caller's token and the acquiring method are for. */
    public String resource() {
        return resource;
    }

    /** The value of the caller's token. */
    public long presentedValue() {
        return presentedValue;
    }
}

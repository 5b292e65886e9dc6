package dev.fencing.guard;

import dev.fencing.FencingException;

/**
 * A {@code @Fenced(acquire = true)} call made while a caller's token for the same resource is bound as remote (from
 * a {@code Fencing-Token} HTTP or message header). Acquiring would set the caller's token aside and fence the write
 * with a fresh one, so a zombie caller's stale request would be applied: the call is refused before any lock is taken.
 */
public class RemoteTokenSetAsideException extends FencingException {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final long presentedValue;

    public RemoteTokenSetAsideException(String resource, String operation, long presentedValue) {
        super("The caller sent a fencing token for resource '" + resource + "' (value " + presentedValue
                + "), but " + operation + " is @Fenced(acquire = true) and would take its own lock, setting the "
                + "caller's token aside (a stale caller's write would then be applied): remove acquire = true from "
                + "it so that its checks present the caller's token, or let the caller send no token for '"
                + resource + "'");
        this.resource = resource;
        this.presentedValue = presentedValue;
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

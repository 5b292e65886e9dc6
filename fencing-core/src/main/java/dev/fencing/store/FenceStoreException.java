package dev.fencing.store;

import dev.fencing.FencingException;
import dev.fencing.token.FencingToken;

/**
 * A store that could not reach a verdict (database unreachable, statement failed): the write did not run. Counted
 * with outcome {@code error}; the call fails closed.
 */
public class FenceStoreException extends FencingException {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final FencingToken presented;

    public FenceStoreException(String resource, FencingToken presented, String message, Throwable cause) {
        super(message, cause);
        this.resource = resource;
        this.presented = presented;
    }

    public String resource() {
        return resource;
    }

    /** The token that was being checked. */
    public FencingToken presented() {
        return presented;
    }
}

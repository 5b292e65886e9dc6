package dev.fencing.guard;

import dev.fencing.FencingException;

/**
 * A fenced call whose key cannot name an entity: it failed to evaluate, evaluated to {@code null}, to a blank text or
 * to a value without a stable text, or made the effective resource longer than the 256-character limit. The call is
 * refused before any lock is taken or store statement runs, and counted with outcome {@code invalid}.
 */
public class InvalidKeyException extends FencingException {

    private static final long serialVersionUID = 1L;

    private final String resource;

    public InvalidKeyException(String resource, String message) {
        super(message);
        this.resource = resource;
    }

    public InvalidKeyException(String resource, String message, Throwable cause) {
        super(message, cause);
        this.resource = resource;
    }

    /** The annotation's resource. */
    public String resource() {
        return resource;
    }
}

package dev.fencing.guard;

import dev.fencing.FencingException;

/**
 * A fenced call whose key could not be computed (it evaluated to {@code null} or failed): the entity to fence is
 * unknown, so the call is refused before anything runs.
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

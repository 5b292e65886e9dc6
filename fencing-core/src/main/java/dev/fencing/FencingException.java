package dev.fencing;

/**
 * Base of every exception the library throws on purpose. Catch it to handle any refused or misconfigured fenced
 * operation in one place; subclasses say why and carry the details (resource, token, max_seen).
 */
public class FencingException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public FencingException(String message) {
        super(message);
    }

    public FencingException(String message, Throwable cause) {
        super(message, cause);
    }
}

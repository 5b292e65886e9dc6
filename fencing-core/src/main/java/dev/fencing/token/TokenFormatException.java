package dev.fencing.token;

import dev.fencing.FencingException;

/**
 * Text that is not exactly the text form of a {@link FencingToken}. Malformed text never becomes a token; the
 * message names what was wrong and where.
 */
public class TokenFormatException extends FencingException {

    private static final long serialVersionUID = 1L;

    public TokenFormatException(String message) {
        super(message);
    }

    public TokenFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}

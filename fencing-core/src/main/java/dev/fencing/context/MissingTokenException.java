package dev.fencing.context;

import dev.fencing.FencingException;

/**
 * A fenced write with no token bound for its resource on the calling thread. Refused, never replaced by a fresh
 * token: a lost propagation must not turn a zombie's write into an accepted one.
 */
public class MissingTokenException extends FencingException {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final String operation;

    public MissingTokenException(String resource, String operation) {
        super("No fencing token bound for resource '" + resource + "' in " + operation
                + "; bind one with FencingContext.bind(...) or call it from a @Fenced(acquire = true) method, "
                + "and propagate it when the call hops threads");
        this.resource = resource;
        this.operation = operation;
    }

    /** The effective resource that had no token. */
    public String resource() {
        return resource;
    }

    /** The fenced operation that was refused. */
    public String operation() {
        return operation;
    }
}

package dev.fencing.context;

import dev.fencing.FencingException;
import dev.fencing.token.FencingToken;

import java.util.Collection;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A fenced write with no token bound for its resource on the calling thread. Refused, never replaced by a fresh
 * token: a lost propagation must not turn a zombie's write into an accepted one.
 */
public class MissingTokenException extends FencingException {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final String operation;
    private final java.util.List<String> boundResources;

    public MissingTokenException(String resource, String operation) {
        this(resource, operation, Set.of());
    }

    /**
     * As {@link #MissingTokenException(String, String)}, naming the resources that do have a token on the thread (at
     * most 8), which points at a misspelt resource or a key prefix without its separator.
     */
    public MissingTokenException(String resource, String operation, Collection<String> boundResources) {
        this(resource, operation, boundResources, "; bind one with FencingContext.bind(...) or call it from a "
                + "@Fenced(acquire = true) method (from another process: send it with the request or message, in the "
                + "Fencing-Token header fencing-web and fencing-amqp read), and propagate it when the call hops "
                + "threads (FencingPropagation wraps an executor or a task; a parallel stream cannot carry it)");
    }

    private MissingTokenException(String resource, String operation, Collection<String> boundResources, String fix) {
        super("No fencing token bound for resource '" + FencingToken.printable(resource) + "' in " + operation + fix
                + bound(boundResources));
        this.resource = resource;
        this.operation = operation;
        this.boundResources = boundResources == null ? java.util.List.of()
                : boundResources.stream().limit(8).toList();
    }

    /**
     * The refusal of a reactive fenced method subscribed with no token in its subscriber's Reactor Context (nor on the
     * subscribing thread): the message says the reactive ways to bind one, where {@code FencingContext.bind} on
     * another thread does not reach the subscription.
     */
    public static MissingTokenException inReactiveChain(String resource, String operation,
                                                        Collection<String> boundResources) {
        return new MissingTokenException(resource, operation, boundResources, "; write one into the subscriber's "
                + "Reactor Context (contextWrite(ReactiveFencing.bind(token)) on the publisher you return, or the "
                + "WebFlux FencingTokenWebFilter for a request's header), or subscribe to it inside a reactive "
                + "@Fenced(acquire = true) method's chain; a publisher subscribed on its own (subscribe() inside "
                + "another chain) does not see that chain's context");
    }

    private static String bound(Collection<String> resources) {
        if (resources == null || resources.isEmpty()) {
            return "";
        }
        return resources.stream().limit(8).map(r -> "'" + FencingToken.printable(r) + "'")
                .collect(Collectors.joining(", ", " (tokens are bound here only for ",
                        resources.size() > 8 ? ", ...)" : ")"));
    }

    /** The effective resource that had no token. */
    public String resource() {
        return resource;
    }

    /**
     * The resources that did have a token on the thread when this one had none (at most 8, in no particular order):
     * with the refused resource, they show a key written differently where the lock was taken.
     */
    public java.util.List<String> boundResources() {
        return boundResources;
    }

    /** The fenced operation that was refused. */
    public String operation() {
        return operation;
    }
}

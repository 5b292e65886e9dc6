package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Internal: public for the Spring and AspectJ adapters (fencing-spring), not for applications.
 * Recognizes return types whose work happens after the method returns: {@code Future}, {@code CompletionStage}, any
 * Reactive Streams or {@code java.util.concurrent.Flow} {@code Publisher} (Reactor's {@code Mono} and {@code Flux},
 * RxJava) and Kotlin's {@code Flow} and {@code Job} (a coroutine started by {@code launch} or {@code async}: its
 * {@code Deferred}), matched by name through the type hierarchy so no such library is needed. The
 * blocking fence checks the token when the method returns, so such a method's write would run outside the atomic
 * unit. The Spring adapters route the types they can fence (reactive types on subscription, futures of
 * {@code @Async} methods on the executor) elsewhere first and refuse the rest, at startup, with {@link #check}. A
 * Kotlin {@code suspend} function, whose declared return type says nothing, is recognized by its last parameter and
 * refused by {@link #checkNotSuspending}.
 */
public final class AsyncReturnTypes {

    private static final Set<String> DEFERRED = Set.of(
            "java.util.concurrent.Future",
            "java.util.concurrent.CompletionStage",
            "java.util.concurrent.Flow$Publisher",
            "org.reactivestreams.Publisher",
            "kotlinx.coroutines.flow.Flow",
            "kotlinx.coroutines.Job");

    /** The last parameter the Kotlin compiler gives a {@code suspend} function. */
    private static final String CONTINUATION = "kotlin.coroutines.Continuation";

    private AsyncReturnTypes() {
    }

    /**
     * Whether a method with these parameter types is a Kotlin {@code suspend} function: its last parameter is a
     * {@code kotlin.coroutines.Continuation} (matched by name, so Kotlin need not be on the class path).
     */
    public static boolean isSuspending(Class<?>[] parameterTypes) {
        return parameterTypes.length > 0 && parameterTypes[parameterTypes.length - 1].getName().equals(CONTINUATION);
    }

    /**
     * Fails when the fenced method is a Kotlin {@code suspend} function: its body can suspend, letting the method
     * return before the write, and resume later on another thread, where no token is bound.
     *
     * @throws FencingConfigurationException naming the method and what to do instead
     */
    public static void checkNotSuspending(Class<?>[] parameterTypes, String operation) {
        if (isSuspending(parameterTypes)) {
            throw new FencingConfigurationException("@Fenced on " + operation + ", a Kotlin suspend function: it "
                    + "can suspend and return before its write, which then runs when it resumes, possibly on another "
                    + "thread, outside the atomic unit in which the fence checks the token and without the token "
                    + "bound there, so a stale write could slip through. Make the fenced function a regular "
                    + "(blocking) one and call it from the coroutine, for instance in withContext(Dispatchers.IO) "
                    + "(a token bound before the coroutine started reaches it only through Spring's "
                    + "PropagationContextElement in its context, which Spring adds to suspend handler methods when "
                    + "Reactor's automatic context propagation is on; or bind it inside), or return a Mono or Flux "
                    + "(fenced when subscribed, with a ReactiveFenceStore) and await it");
        }
    }

    /** The deferred-result type {@code type} is or implements, or {@code null} when it is an ordinary type. */
    public static String deferredType(Class<?> type) {
        String found = firstOf(type, DEFERRED);
        return found == null ? null : found.replace('$', '.');
    }

    /** The first of {@code names} that {@code type} is, extends or implements, or {@code null}. */
    private static String firstOf(Class<?> type, Collection<String> names) {
        Deque<Class<?>> pending = new ArrayDeque<>();
        Set<Class<?>> seen = new HashSet<>();
        pending.add(type);
        while (!pending.isEmpty()) {
            Class<?> current = pending.poll();
            if (!seen.add(current)) {
                continue;
            }
            if (names.contains(current.getName())) {
                return current.getName();
            }
            if (current.getSuperclass() != null) {
                pending.add(current.getSuperclass());
            }
            Collections.addAll(pending, current.getInterfaces());
        }
        return null;
    }

    /** Results whose work runs when their caller consumes them, after the method returned. */
    private static final List<String> LAZY = List.of("java.util.stream.BaseStream", "java.util.Iterator",
            "java.util.Spliterator");

    private static final System.Logger LOG = System.getLogger(AsyncReturnTypes.class.getName());

    /**
     * Warns, once per call of this at startup, when a fenced method returns a lazy result (a {@code Stream}, an
     * {@code Iterator}, a {@code Spliterator}): what it does when consumed runs after the check, in the caller's
     * transaction if there is one (a JDBC store's fence row is held until it commits), else outside the fence. Not
     * refused: a fenced query that streams its rows inside the caller's transaction is in order.
     */
    public static void warnIfLazy(Class<?> returnType, String operation) {
        if (firstOf(returnType, LAZY) != null) {
            LOG.log(System.Logger.Level.WARNING, () -> "@Fenced on " + operation + " returns "
                    + returnType.getTypeName() + ", which its caller consumes after the method returned: what it "
                    + "does then (a write in a map step, rows a query streams) runs after the check, inside the "
                    + "fence only while the transaction that called the method is still open (the JDBC store holds "
                    + "the fence row until it commits; the in-memory store's fence ends when the method returns). "
                    + "Return a List, or consume the result inside that transaction");
        }
    }

    /**
     * Fails when a fenced method returning {@code returnType} would write after it returns.
     *
     * @throws FencingConfigurationException naming the method, the type and why
     */
    public static void check(Class<?> returnType, String operation) {
        String deferred = deferredType(returnType);
        if (deferred != null) {
            throw new FencingConfigurationException("@Fenced on " + operation + " returns "
                    + returnType.getTypeName() + (deferred.equals(returnType.getName()) ? "" : " (a " + deferred + ")")
                    + ", an asynchronous result: its write happens after the method returns, outside the atomic unit "
                    + "in which the fence checks the token, so a stale write could slip through. Fenced methods must "
                    + "do their write before returning, or return a Mono or Flux (fenced when subscribed, with a "
                    + "ReactiveFenceStore), or be @Async if they return a future (fenced on the executor)");
        }
    }
}

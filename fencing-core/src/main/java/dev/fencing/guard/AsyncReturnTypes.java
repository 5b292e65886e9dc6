package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
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
        Deque<Class<?>> pending = new ArrayDeque<>();
        Set<Class<?>> seen = new HashSet<>();
        pending.add(type);
        while (!pending.isEmpty()) {
            Class<?> current = pending.poll();
            if (!seen.add(current)) {
                continue;
            }
            if (DEFERRED.contains(current.getName())) {
                return current.getName().replace('$', '.');
            }
            if (current.getSuperclass() != null) {
                pending.add(current.getSuperclass());
            }
            Collections.addAll(pending, current.getInterfaces());
        }
        return null;
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

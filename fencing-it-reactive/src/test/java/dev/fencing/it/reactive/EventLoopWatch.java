package dev.fencing.it.reactive;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * BlockHound, installed once in the test JVM with its default integrations (Reactor's non-blocking schedulers, Netty's
 * event loops, which Reactor Netty serves and the R2DBC driver talks on): every blocking call on one of those threads
 * is recorded (thread and method) and then fails as BlockHound fails it, with a {@link BlockingOperationError}.
 */
final class EventLoopWatch {

    private static final List<String> CALLS = new CopyOnWriteArrayList<>();
    private static boolean installed;

    private EventLoopWatch() {
    }

    static synchronized void install() {
        if (!installed) {
            // install(...) applies the integrations on the class path (ServiceLoader) as well as this one
            BlockHound.install(builder -> builder.blockingMethodCallback(method -> {
                CALLS.add(Thread.currentThread().getName() + ": " + method);
                throw new BlockingOperationError(method);
            }));
            installed = true;
        }
    }

    static void clear() {
        CALLS.clear();
    }

    /** The blocking calls caught since the last {@link #clear()}, as "thread: method". */
    static List<String> blockingCalls() {
        return List.copyOf(CALLS);
    }
}

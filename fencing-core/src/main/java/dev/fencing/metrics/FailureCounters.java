package dev.fencing.metrics;

import dev.fencing.FencingException;
import io.micrometer.core.instrument.Counter;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The counters of one failure outcome (for example {@code fencing.checks} with {@code outcome=error} for one resource),
 * one per {@code exception} tag: the simple class name of the exception that caused the failure, as Micrometer's
 * {@code CountedAspect} tags it. The cause is the exception a library exception wraps (a {@link FencingException}
 * with a cause, such as a {@code FenceStoreException} around the driver's exception), else the exception itself.
 *
 * <p>Low cardinality: class simple names only, never messages; each counter is created on the first failure of its
 * class and kept in a small map, so a repeated failure builds nothing. Past {@value #MAX_CLASSES} distinct classes
 * further ones share the tag {@value #OTHER}. Nothing here runs on an accepted call.
 */
public final class FailureCounters {

    /** How many distinct exception classes get their own counter per outcome. */
    public static final int MAX_CLASSES = 32;

    /** The tag value of exception classes past {@link #MAX_CLASSES}. */
    public static final String OTHER = "other";

    private final Function<String, Counter> factory;
    private final ConcurrentHashMap<Class<?>, Counter> byClass = new ConcurrentHashMap<>();
    private volatile Counter other;

    /** @param factory creates (registers) the counter for one {@code exception} tag value */
    public FailureCounters(Function<String, Counter> factory) {
        this.factory = factory;
    }

    /** The counter for a failure caused by {@code failure}, created on its class's first failure. */
    public Counter counter(Throwable failure) {
        Class<?> type = origin(failure).getClass();
        Counter counter = byClass.get(type);
        if (counter != null) {
            return counter;
        }
        if (byClass.size() >= MAX_CLASSES) {
            Counter shared = other;
            if (shared == null) {
                shared = factory.apply(OTHER);
                other = shared;
            }
            return shared;
        }
        return byClass.computeIfAbsent(type, t -> factory.apply(exceptionTag(t)));
    }

    /** Counts a failure caused by {@code failure}; a failing meter never breaks the call. */
    public void increment(Throwable failure) {
        try {
            counter(failure).increment();
        } catch (RuntimeException ignored) {
            // metrics are advisory
        }
    }

    /** The exception a failure is tagged with: the cause a library exception wraps, else the failure itself. */
    public static Throwable origin(Throwable failure) {
        if (failure instanceof FencingException && failure.getCause() != null) {
            return failure.getCause();
        }
        return failure;
    }

    /** The {@code exception} tag value of a class: its simple name (for an anonymous class, its binary name's tail). */
    public static String exceptionTag(Class<?> type) {
        String simple = type.getSimpleName();
        if (!simple.isEmpty()) {
            return simple;
        }
        String name = type.getName();
        return name.substring(name.lastIndexOf('.') + 1);
    }
}

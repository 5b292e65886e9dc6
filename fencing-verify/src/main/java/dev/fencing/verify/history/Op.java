package dev.fencing.verify.history;

import java.util.List;
import java.util.Objects;

/**
 * An operation event of one client: the invocation of an operation or its completion, paired by
 * {@code (process, index)}. {@code value} is what the operation carries: the element added, the counter value read,
 * the set read (a {@code List<Long>}); it and {@code token} and {@code reason} may be null. Integral values are
 * kept as {@code Long}, whatever was passed, so an element added and the same element read compare equal.
 *
 * @param type     invoke, ok, fail or info
 * @param process  the client that ran it
 * @param index    the client's operation number, the same on the invocation and its completion
 * @param f        the operation: acquire, add, read, increment, append, release, ...
 * @param resource the lock and store resource it concerns, may be null
 * @param token    the fencing token it ran under or was granted, may be null
 * @param value    the operation's value: a Long, a String, a Boolean or a List of those; may be null
 * @param reason   why it failed or is unknown (fail and info), may be null
 * @param wall     epoch millis when recorded
 * @param mono     System.nanoTime() when recorded
 */
public record Op(OpType type, int process, long index, String f, String resource, Long token, Object value,
                 String reason, long wall, long mono) implements HistoryEvent {

    public Op {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(f, "f");
        value = normalize(value);
    }

    /** Integral numbers as Long (as the reader produces them), lists copied: equal values compare equal. */
    private static Object normalize(Object value) {
        if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof List<?> list) {
            return list.stream().map(Op::normalize).toList();
        }
        return value;
    }

    @Override
    public String jsonType() {
        return type.json();
    }

    /** The same operation completed as {@code completion} at the given times, with its own token, value and reason. */
    public Op complete(OpType completion, Long token, Object value, String reason, long wall, long mono) {
        return new Op(completion, process, index, f, resource, token, value, reason, wall, mono);
    }

    /** {@link #value()} as a long, or null when it is not an integral number (a 2.5 is not rounded down to 2). */
    public Long longValue() {
        return value instanceof Long n ? n : null;
    }
}

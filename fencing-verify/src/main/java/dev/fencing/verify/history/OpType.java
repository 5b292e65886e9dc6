package dev.fencing.verify.history;

import java.util.Locale;

/**
 * What an operation event says: the client is about to try an operation ({@code invoke}), it completed
 * ({@code ok}), it certainly did not take effect ({@code fail}), or its outcome is unknown ({@code info}: a timeout,
 * a lost connection, a process killed mid-call). The JSON form is the lower-case name.
 */
public enum OpType {
    INVOKE, OK, FAIL, INFO;

    /** The name written to the history, {@code invoke}, {@code ok}, {@code fail} or {@code info}. */
    public String json() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The type named {@code text} in a history line. */
    public static OpType fromJson(String text) {
        return valueOf(text.toUpperCase(Locale.ROOT));
    }

    /** Whether this event closes an operation (every type but {@code invoke}). */
    public boolean isCompletion() {
        return this != INVOKE;
    }
}

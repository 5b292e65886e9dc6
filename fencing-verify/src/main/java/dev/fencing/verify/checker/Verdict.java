package dev.fencing.verify.checker;

import java.util.Locale;

/**
 * The checker's conclusion about a history: {@code invalid} when any check found an anomaly, {@code unknown} when
 * no check could judge it (or one lacked its evidence and nothing was found elsewhere), {@code valid} otherwise.
 */
public enum Verdict {
    VALID, INVALID, UNKNOWN;

    /** The lower-case name used in the reports. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}

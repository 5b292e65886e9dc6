package dev.fencing.verify.checker;

import java.util.Locale;

/**
 * The anomalies the checker knows. Each one makes a history {@code invalid}; the JSON and Markdown reports name it
 * by its lower-case, dashed form ({@code lost-write}).
 */
public enum AnomalyKind {
    /**
     * lock-set: an {@code add} that completed ok is missing from the final read of the set; token order: an
     * {@code append} that completed ok has no row in the log; counter: two increments that completed ok wrote the
     * same value.
     */
    LOST_WRITE,
    /**
     * lock-set, token order: a write that completed {@code fail} (it certainly did not take effect: refused as
     * stale, or failed before its statement ran) is in the final read or the log all the same.
     */
    FAILED_WRITE_APPLIED,
    /** counter: the final value is outside [acknowledged, acknowledged + unknown] increments. */
    COUNTER_OUT_OF_RANGE,
    /** store commit order: a write with a lower token was applied after one with a higher token. */
    STALE_WRITE_APPLIED,
    /**
     * store commit order: two processes' writes were applied under the same token, or one operation's write was
     * applied twice (its {@code (process, op)} is in two rows of the log).
     */
    DUPLICATE_WRITE_APPLIED,
    /**
     * store commit order: a row of the log carries a token other than the one the operation that wrote it recorded
     * (on its invocation or its completion).
     */
    TOKEN_MISMATCH,
    /** issuer: two processes were granted the same token for one resource. */
    DUPLICATE_GRANT,
    /** issuer: a grant that began after another was acknowledged got a smaller token. */
    TOKEN_REGRESSION;

    /** The name used in reports, such as {@code lost-write}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}

package dev.fencing.verify.checker;

import dev.fencing.verify.history.History;

/**
 * One property of a history, judged on its own: a check reads the whole history and reports the anomalies it finds
 * ({@link CheckReport}). Checks are stateless and never modify the history.
 */
public interface Check {

    /** A short name for the reports, such as {@code lock-set}. */
    String name();

    /** Judges {@code history}. */
    CheckReport check(History history);
}

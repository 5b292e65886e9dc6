package dev.fencing.verify.history;

/**
 * One line of a history: an operation event ({@link Op}), a nemesis event ({@link NemesisEvent}) or a row of the
 * store's commit order ({@link CommitRow}). Every event but a commit row carries the wall-clock time (epoch millis)
 * and the monotonic time ({@code System.nanoTime()}, comparable across the JVMs of one Linux host) it was recorded.
 */
public sealed interface HistoryEvent permits Op, NemesisEvent, CommitRow {

    /** The {@code type} field of the line: invoke, ok, fail, info, nemesis or commit. */
    String jsonType();
}

package dev.fencing.verify.history;

import java.util.Objects;

/**
 * One row of the store's own commit order, as the workload read it back at the end (the {@code append} workload's
 * table, ordered by its sequence): the write with sequence {@code seq} on {@code resource} was applied under
 * {@code token} by {@code process}'s operation {@code op}. Rows are written after the run, in {@code seq} order.
 *
 * @param seq      the store's commit sequence number
 * @param resource the resource written
 * @param token    the token the write carried, may be null (a write made with the fence off and no token)
 * @param process  the client that wrote it
 * @param op       that client's operation index
 */
public record CommitRow(long seq, String resource, Long token, int process, long op) implements HistoryEvent {

    public CommitRow {
        Objects.requireNonNull(resource, "resource");
    }

    @Override
    public String jsonType() {
        return "commit";
    }
}

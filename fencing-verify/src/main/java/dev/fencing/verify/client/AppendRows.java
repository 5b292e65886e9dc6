package dev.fencing.verify.client;

/**
 * The append workload's data: one log table for every resource; each append inserts a row and the database gives
 * it the next number of one sequence ({@code seq}), the order the runner reads the log back in.
 */
public interface AppendRows {

    /**
     * Appends the row {@code (resource, token, process, op)} to the log of resource {@code row}.
     *
     * @param row      the resource's number (the fence key)
     * @param resource the resource's name in the history
     * @param token    the token the writer holds the lock with
     * @param process  the writing client
     * @param op       the history index of the append
     */
    void append(int row, String resource, long token, int process, long op);
}

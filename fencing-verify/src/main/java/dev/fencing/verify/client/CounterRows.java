package dev.fencing.verify.client;

/**
 * The counter workload's data: one counter per resource (row {@code row}, starting at 0), read and written back
 * whole, so that a stale read-increment-write overwrites the increments made since its read.
 */
public interface CounterRows {

    /** The counter of resource {@code row}. */
    long read(int row);

    /** Sets the counter of resource {@code row} to {@code value}. */
    void write(int row, long value);
}

package dev.fencing.verify.client;

import java.util.List;

/**
 * The lock-set workload's data: one row per resource holding that resource's whole set, read and written back
 * whole, so that a stale read-modify-write replaces the elements other clients added since its read (the anomaly
 * the fence must prevent). {@code row} is the resource's number, 0 to resources - 1.
 */
public interface SetRows {

    /** The set of resource {@code row} as stored. */
    List<Long> read(int row);

    /** Replaces the set of resource {@code row} with {@code elements}. */
    void write(int row, List<Long> elements);
}

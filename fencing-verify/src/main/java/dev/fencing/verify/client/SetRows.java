package dev.fencing.verify.client;

import java.util.List;

/**
 * The lock-set workload's data: one row holding the whole set, read and written back whole, so that a stale
 * read-modify-write replaces the elements other clients added since its read (the anomaly the fence must prevent).
 */
public interface SetRows {

    /** The set as stored. */
    List<Long> read();

    /** Replaces the set with {@code elements}. */
    void write(List<Long> elements);
}

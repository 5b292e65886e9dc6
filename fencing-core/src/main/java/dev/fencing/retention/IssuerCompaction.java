package dev.fencing.retention;

import java.time.Duration;

/**
 * The retention side of an issuer that keeps a row per resource (the JDBC lease table): folds the rows of resources
 * that are free and idle for longer than an age into their family's issuing floor, so that no resource is ever
 * issued a token at or below one it was issued before. Safe while acquires run.
 */
public interface IssuerCompaction {

    /**
     * Folds every free resource idle for longer than {@code idleFor} into its family's floor, {@code batchSize} per
     * atomic unit, until none is left.
     *
     * @throws IllegalArgumentException when {@code idleFor} is negative or {@code batchSize} below 1; nothing changed
     */
    CompactionResult compact(Duration idleFor, int batchSize);
}

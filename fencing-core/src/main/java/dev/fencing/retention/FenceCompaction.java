package dev.fencing.retention;

import java.time.Duration;
import java.util.OptionalLong;

/**
 * The retention side of a fence store: folds the state of resources idle for longer than an age into their
 * family's floor ({@link ResourceFamily}), so per-entity keys do not keep a row each for ever. Safe while checks
 * run: a resource's state is removed only in the same atomic unit that raised its family's floor to at least its
 * max_seen, and a check of a resource without state is judged against that floor, so a token refused before the
 * compaction stays refused after it. Resources without a family are never folded.
 */
public interface FenceCompaction {

    /**
     * Folds every resource untouched for longer than {@code idleFor} into its family's floor, {@code batchSize}
     * resources per atomic unit, until none is left. Before a batch raises a family's floor to {@code v} it calls
     * {@code issuer.raiseFamilyFloor(family, v)}, so the issuer's next token for any resource of the family is
     * above the floor (a batch that then fails leaves the issuer's floor higher than needed, which is harmless).
     *
     * @param issuer the issuer of this store's tokens; {@link IssuerFloors#ONE_SEQUENCE} when its tokens come from one
     *               sequence for every resource
     * @throws IllegalArgumentException when {@code idleFor} is negative or {@code batchSize} below 1
     */
    CompactionResult compact(Duration idleFor, int batchSize, IssuerFloors issuer);

    /** The floor of {@code family}, empty when none of its resources was ever folded. */
    OptionalLong familyFloor(String family);
}

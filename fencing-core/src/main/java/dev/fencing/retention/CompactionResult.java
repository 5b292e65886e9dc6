package dev.fencing.retention;

/**
 * What one compaction did: how many idle resources' state it folded into family floors, in how many batches (one
 * transaction each), and how many families' floors it raised.
 *
 * @param folded   resources whose own state was removed (each now judged against its family's floor)
 * @param batches  transactions committed
 * @param families distinct families whose floor was raised or created
 */
public record CompactionResult(long folded, int batches, int families) {

    /** Nothing was idle long enough. */
    public static final CompactionResult NONE = new CompactionResult(0, 0, 0);
}

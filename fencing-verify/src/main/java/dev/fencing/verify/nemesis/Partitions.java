package dev.fencing.verify.nemesis;

/**
 * Cuts a client off from the lock service and heals the cut: what the {@link PartitionNemesis} needs of the run.
 * The store stays reachable, so that a cut lock holder can go on writing with its old token.
 */
public interface Partitions {

    /** Cuts {@code target} off from the lock service; false when it runs in no namespace of its own (or is gone). */
    boolean cut(Target target);

    /** Heals the cut of {@code target}; a no-op when it is not cut. */
    void heal(Target target);
}

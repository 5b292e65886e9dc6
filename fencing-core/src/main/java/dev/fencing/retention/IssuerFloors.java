package dev.fencing.retention;

/**
 * An issuer that can be made to issue, for every resource of a family, only tokens above a floor. Compaction needs
 * it: a fence store that folded a family into a floor refuses every token at or below it for a resource with no
 * state, so before a floor is raised the issuer must already issue above it. Issuers whose tokens come from one
 * sequence for every resource (ZooKeeper's zxid, etcd's revision) meet it by construction; issuers with a counter
 * per resource (the JDBC lease) raise their family's counter floor.
 */
public interface IssuerFloors extends CounterFloors {

    /**
     * For an issuer whose tokens come from one sequence for every resource (ZooKeeper, etcd): every token it issues
     * from now on is larger than every token it issued before, for any resource, so no floor needs raising. Wrong
     * for an issuer with a counter per resource: its low counters would then be refused.
     */
    IssuerFloors ONE_SEQUENCE = (family, floor) -> { };

    /**
     * Makes every token issued from now on for a resource of {@code family} larger than {@code floor}. Durable when
     * the issuer is; idempotent; never lowers a floor.
     *
     * @throws IllegalArgumentException when {@code family} is blank or {@code floor} is negative
     */
    void raiseFamilyFloor(String family, long floor);

    /**
     * {@inheritDoc} The step after a restore of the issuer's counters, so that the tokens it issues next clear the
     * floor a {@code FloorRaise} gave the fence store. The default does nothing, which is right for an issuer with one
     * sequence (its next token is above the sequence's current value anyway); an issuer with a counter per resource
     * overrides it.
     */
    @Override
    default void raiseResourceFloor(String resource, long floor) {
    }

    /**
     * The argument check every implementation makes before raising anything: {@code family} not blank,
     * {@code floor} not negative.
     *
     * @param owner how the message names the caller, such as {@code ZooKeeperTokenIssuer.raiseFamilyFloor}
     * @throws IllegalArgumentException naming the owner, the family and the floor
     */
    static void checkArguments(String owner, String family, long floor) {
        if (family == null || family.isBlank()) {
            throw new IllegalArgumentException(owner + ": family must not be blank, was "
                    + (family == null ? null : "'" + family + "'"));
        }
        if (floor < 0) {
            throw new IllegalArgumentException(owner + ": floor of family '" + family + "' must not be negative, was "
                    + floor);
        }
    }
}

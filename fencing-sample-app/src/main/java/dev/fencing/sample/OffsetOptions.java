package dev.fencing.sample;

import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.jdbc.JdbcIssuerBase;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.recovery.IssuedResources;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.retention.IssuerFloors;

import javax.sql.DataSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The issuer offset options of {@code reset-floor} and {@code raise-floors}: {@code --offset NAME} adds the base stored
 * under NAME in the issuer base table ({@code --issuer-base-table}, default {@code fencing_issuer_base}) to the lease
 * table's tokens, as an application with {@code fencing.issuer.offset.base} does. With or without it, the command
 * refuses to go below the highest stored base ({@code withStoredBases}): that migration's issuer hands out tokens
 * above it.
 */
final class OffsetOptions {

    private String name;
    private String table = JdbcIssuerBase.DEFAULT_TABLE;
    private boolean missing;

    /**
     * Takes {@code args[i]} (and its value) when it is an offset option.
     *
     * @return the index of the last argument taken, or -1 when {@code args[i]} is not an offset option
     */
    int accept(String[] args, int i) {
        switch (args[i]) {
            case "--offset" -> name = Options.value(args, i);
            case "--issuer-base-table" -> table = Options.value(args, i);
            default -> {
                return -1;
            }
        }
        return i + 1;
    }

    /** Fails when {@code --offset} comes with {@code --no-lease}, whose tokens it could not shift. */
    void requireLease(boolean noLease, String command) {
        if (noLease && name != null) {
            throw new IllegalArgumentException(command + ": --offset " + name + " shifts the lease table's tokens, "
                    + "and --no-lease says they come from elsewhere; give the value with the base included instead");
        }
    }

    /** The bases stored in the issuer base table, none when it does not exist. */
    Map<String, Long> stored(DataSource dataSource) {
        Optional<Map<String, Long>> bases = JdbcIssuerBase.storedBasesIfPresent(dataSource, table);
        if (bases.isEmpty()) {
            if (name != null) {
                throw new IllegalArgumentException("--offset " + name + ": the issuer base table " + table
                        + " does not exist; give its name with --issuer-base-table");
            }
            missing = true;
            return Map.of(); // no base table: no migration was ever stored here
        }
        return bases.get();
    }

    /** The lease table's tokens, shifted by the {@code --offset} base when one is given. */
    IssuedTokens issued(JdbcTokenIssuer lease, Map<String, Long> stored) {
        if (name == null) {
            return lease;
        }
        Long base = stored.get(name);
        if (base == null) {
            throw new IllegalArgumentException("--offset " + name + ": the issuer base table " + table + " stores no "
                    + "base under that name; stored: " + stored);
        }
        return new ShiftedLease(OffsetTokenIssuer.of(lease, base), lease);
    }

    /**
     * The lease table's tokens with the base added ({@link OffsetTokenIssuer}: highest tokens, counters and family
     * floors shifted), listing the lease table's resources as the table itself does (names are not shifted).
     */
    private record ShiftedLease(OffsetTokenIssuer shifted, JdbcTokenIssuer lease)
            implements IssuedTokens, IssuedResources, IssuerFloors {

        @Override
        public long highestIssued(String resource) {
            return ((IssuedTokens) shifted).highestIssued(resource);
        }

        @Override
        public boolean isHeld(String resource) {
            return ((IssuedTokens) shifted).isHeld(resource);
        }

        @Override
        public List<String> issuedResources(String after, int limit) {
            return lease.issuedResources(after, limit);
        }

        @Override
        public void raiseFamilyFloor(String family, long floor) {
            ((IssuerFloors) shifted).raiseFamilyFloor(family, floor);
        }

        @Override
        public void raiseResourceFloor(String resource, long floor) {
            ((IssuerFloors) shifted).raiseResourceFloor(resource, floor);
        }
    }

    /**
     * What to print when {@link #stored} found no base table: a move stored under another table name
     * ({@code fencing.issuer.offset.table}) would go unseen, so the command says which one it read; {@code null} when
     * it found one.
     */
    String missingNote() {
        return missing ? "note: no issuer base table '" + table + "' in this database, so no issuer migration bounds "
                + "this command; if the tokens carry an offset stored in another table (fencing.issuer.offset.table), "
                + "give it with --issuer-base-table and --offset" : null;
    }
}

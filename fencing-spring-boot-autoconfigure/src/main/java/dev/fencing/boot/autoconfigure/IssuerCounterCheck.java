package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.recovery.FenceInventory;
import dev.fencing.recovery.IssuedResources;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.signing.SigningTokenIssuer;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.token.FencingToken;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Once every singleton exists: fails startup when the application's one-sequence issuer (ZooKeeper, etcd:
 * {@link IssuedTokens#oneSequence()}) counts below the fence store's highest max_seen, since every write to that
 * resource would then be refused as stale (a move to a new issuer without {@code fencing.issuer.offset.base}), or
 * below the highest token of the previous issuer's JDBC lease table on the application's DataSource. The
 * message names the issuer offsets already stored, so that an instance of a move other instances made is configured as
 * they are rather than given a base of its own. With {@code fencing.issuer.check-fence-store=false} the same finding
 * is logged as a warning. For an issuer with a counter per resource (the JDBC lease, Redisson), the first
 * {@value #SAMPLE} resources of the store are compared one by one, and those counting below their max_seen are logged
 * as a warning (the repair, the actuator's floor raise, needs the application running). Stores without a listing are
 * not checked; a read that fails is logged.
 */
final class IssuerCounterCheck implements SmartInitializingSingleton {

    static final String PROPERTY = "fencing.issuer.check-fence-store";

    /** The resource the counter is read for: a one-sequence issuer answers the same for every resource. */
    static final String PROBE_RESOURCE = "fencing-startup-check";

    /** How many of the store's resources the check of an issuer with a counter per resource reads. */
    static final int SAMPLE = 100;

    private static final Log log = LogFactory.getLog(IssuerCounterCheck.class);

    /** The end of a failure's message: the one case the check is to be turned off for. */
    private static final String SHARED_TABLE = ". If the fence table is shared with another application whose issuer "
            + "counts higher, set " + PROPERTY + "=false";

    private final ObjectProvider<TokenIssuer> issuers;
    private final Supplier<FenceInventory> inventory;
    private final Supplier<Map<String, Long>> storedOffsets;
    private final BooleanSupplier baseStorable;
    private final boolean enforced;
    private final Function<TokenIssuer, OptionalLong> oldLeaseTokens;
    private final String leaseTable;

    /**
     * @param oldLeaseTokens the highest token of a JDBC lease table on the application's DataSource that is not the
     *                       issuer's own (empty when there is none)
     * @param leaseTable     that table's name, for the message
     */
    IssuerCounterCheck(ObjectProvider<TokenIssuer> issuers, Supplier<FenceInventory> inventory,
                       Supplier<Map<String, Long>> storedOffsets, BooleanSupplier baseStorable, boolean enforced,
                       Function<TokenIssuer, OptionalLong> oldLeaseTokens, String leaseTable) {
        this.issuers = issuers;
        this.inventory = inventory;
        this.storedOffsets = storedOffsets;
        this.baseStorable = baseStorable;
        this.enforced = enforced;
        this.oldLeaseTokens = oldLeaseTokens;
        this.leaseTable = leaseTable;
    }

    @Override
    public void afterSingletonsInstantiated() {
        TokenIssuer issuer = issuers.getIfUnique();
        FenceInventory fences = inventory.get();
        String problem = problem(issuer, fences, storedOffsets, enforced);
        if (problem == null) {
            String belowLease = belowOldLeaseTable(issuer);
            if (belowLease != null) {
                if (enforced) {
                    throw new FencingConfigurationException(belowLease + ". " + PROPERTY + "=false turns this check "
                            + "off");
                }
                log.warn(belowLease + ". The check is off (" + PROPERTY + "=false), so this application starts "
                        + "anyway");
                return;
            }
            String below = enforced ? countersBelow(issuer, fences, storedOffsets) : null;
            if (below != null) {
                log.warn(below);
            }
            String empty = enforced ? emptyBesideIssued(issuer, fences) : null;
            if (empty != null) {
                log.warn(empty);
            }
            return;
        }
        if (!baseStorable.getAsBoolean()) {
            // an R2DBC-only application: the advice above would fail next for want of a place to store the base
            problem += ". An offset base is stored once, durably, and this application has nowhere to store it: add "
                    + "fencing-jdbc and a DataSource (the base goes in " + IssuerOffsetPostProcessor.PREFIX
                    + ".table), or define an IssuerBase bean";
        }
        if (enforced) {
            throw new FencingConfigurationException(problem + SHARED_TABLE);
        }
        log.warn(problem + ". The check is off (" + PROPERTY + "=false), so this application starts anyway");
    }

    /**
     * Compares the counter of {@code issuer} with the highest max_seen of {@code fences}.
     *
     * @throws FencingConfigurationException when the issuer is a one-sequence issuer whose counter is below it
     */
    static void check(TokenIssuer issuer, FenceInventory fences, Supplier<Map<String, Long>> storedOffsets) {
        String problem = problem(issuer, fences, storedOffsets, true);
        if (problem != null) {
            throw new FencingConfigurationException(problem + SHARED_TABLE);
        }
    }

    /**
     * What is wrong when a one-sequence {@code issuer} counts below the highest max_seen of {@code fences}; when the
     * issuer cannot be read and {@code enforced}, it is told to require its tokens above that max_seen.
     */
    private static String problem(TokenIssuer issuer, FenceInventory fences,
                                  Supplier<Map<String, Long>> storedOffsets, boolean enforced) {
        TokenIssuer counted = issuer instanceof SigningTokenIssuer signing ? signing.delegate() : issuer;
        long[] read = fences == null ? null
                : counterBelow(counted, fences::highestMaxSeen, "the fence store's highest max_seen", enforced);
        return read == null ? null : message(counted, read[0], read[1], storedOffsets.get());
    }

    /**
     * The counter of {@code counted}, a one-sequence issuer, and {@code bound} when the counter is below it;
     * {@code null} when the issuer counts per resource, there is no bound, the counter reaches it, or either cannot be
     * read (then a warning naming {@code what}; when the issuer could not be read and {@code enforced}, the issuer is
     * told to require its tokens above the bound, {@link IssuedTokens#requireAbove}).
     */
    private static long[] counterBelow(TokenIssuer counted, Supplier<OptionalLong> bound, String what,
                                       boolean enforced) {
        if (!(counted instanceof IssuedTokens tokens && tokens.oneSequence())) {
            return null;
        }
        OptionalLong highest;
        try {
            highest = bound.get();
        } catch (RuntimeException e) {
            log.warn("Could not compare the token issuer's counter with " + what + " at startup (" + PROPERTY
                    + "), the check is skipped: " + e);
            return null;
        }
        if (highest.isEmpty()) {
            return null;
        }
        try {
            long counter = tokens.highestIssued(PROBE_RESOURCE);
            return counter < highest.getAsLong() ? new long[] {counter, highest.getAsLong()} : null;
        } catch (RuntimeException e) {
            FencingConfigurationException setup = setupMistake(e);
            if (setup != null) { // the lock service answered, and what it said is a setup mistake: not an outage
                throw setup;
            }
            if (!enforced) {
                log.warn("Could not compare the token issuer's counter with " + what + " at startup (" + PROPERTY
                        + "), the check is skipped: " + e);
                return null;
            }
            // the lock service cannot be asked now (down at startup): an issuer that never read its sequence could
            // not tell one that went back meanwhile (an ensemble back on an empty data dir), so it is told the bound
            tokens.requireAbove(highest.getAsLong(), what + " (" + highest.getAsLong() + "), read at startup while "
                    + "the lock service could not be asked");
            log.warn("Could not compare the token issuer's counter with " + what + " at startup (" + PROPERTY
                    + "), the check is skipped: " + e + ". The application starts, and every acquiring call fails "
                    + "until it answers: if the lock service is up, the issuer's address is wrong (a typo looks the "
                    + "same as an outage): " + counted.describe() + ". This issuer refuses any token at or below "
                    + highest.getAsLong() + " from now on, as a sequence that went back meanwhile");
            return null;
        }
    }

    /**
     * The {@link FencingConfigurationException} in the cause chain of an issuer's failure, or {@code null}: the issuer
     * found a setup mistake when asked (a Hazelcast client's cluster in CP unsafe mode), which no waiting mends.
     */
    private static FencingConfigurationException setupMistake(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof FencingConfigurationException setup) {
                return setup;
            }
        }
        return null;
    }

    /**
     * What is wrong when a one-sequence {@code issuer} counts below the highest token of a JDBC lease table on the
     * application's DataSource, the previous issuer's: a holder of that issuer paused before writing holds a token no
     * fence store has seen, which the max_seen comparison cannot find (a trial's zombie wrote after the new issuer's
     * holders, its token above theirs).
     */
    private String belowOldLeaseTable(TokenIssuer issuer) {
        TokenIssuer counted = issuer instanceof SigningTokenIssuer signing ? signing.delegate() : issuer;
        long[] read = counterBelow(counted, () -> oldLeaseTokens.apply(counted),
                "the highest token of the lease table '" + leaseTable + "'", enforced);
        if (read == null) {
            return null;
        }
        long counter = read[0];
        long old = read[1];
        OffsetTokenIssuer offset = counted instanceof OffsetTokenIssuer shifted ? shifted : null;
        String name = (offset != null ? offset.delegate() : counted).getClass().getSimpleName();
        return "The token issuer's counter is " + counter + (offset != null ? " (with fencing.issuer.offset.base="
                + offset.base() + ")" : "") + " (" + name + ": one sequence for every resource), below the highest "
                + "token " + old + " of the JDBC lease table '" + leaseTable + "' on the application's DataSource "
                + "(fencing.issuer.jdbc.table), the previous issuer's: a holder that acquired from it before the move "
                + "and paused before writing holds a token up to " + old + " that no fence store has seen, and its "
                + "late write would pass the writes of this issuer's holders. Set fencing.issuer.offset.base above "
                + old + ", with headroom for what the old issuer hands out while the deploy rolls, under a "
                + "fencing.issuer.offset.name of its own, on every instance (docs/issuers.md, \"Moving to another "
                + "issuer\"). If that table is left over from a move finished long ago (no holder of its tokens can "
                + "be alive), drop it";
    }

    private static String message(TokenIssuer counted, long counter, long highest, Map<String, Long> stored) {
        OffsetTokenIssuer offset = counted instanceof OffsetTokenIssuer shifted ? shifted : null;
        long base = offset != null ? offset.base() : 0;
        String name = (offset != null ? offset.delegate() : counted).getClass().getSimpleName();
        // the stored offsets with which this issuer would count past max_seen (its own counter plus that base)
        Map<String, Long> enough = new LinkedHashMap<>();
        stored.forEach((migration, storedBase) -> {
            if (storedBase != base && counter - base + storedBase >= highest) {
                enough.put(migration, storedBase);
            }
        });
        String fix;
        if (!enough.isEmpty()) {
            Map.Entry<String, Long> first = enough.entrySet().iterator().next();
            fix = "Issuer offsets are stored that would put it past max_seen: " + list(enough) + ". If this instance "
                    + "belongs to that move, configure it as the instances that stored it are: "
                    + IssuerOffsetPostProcessor.PREFIX + ".name=" + first.getKey() + " and "
                    + IssuerOffsetPostProcessor.PREFIX + ".base=" + first.getValue() + " (instances with different "
                    + "offsets issue tokens in different ranges, and the lower ones are refused). Do not choose a "
                    + "base of your own for it: a higher one would leave the other instances below it in turn";
        } else if (offset == null) {
            java.util.Map<String, Object> where = counted.describe();
            fix = "First make sure the issuer is the one this store's tokens came from: an issuer pointed at another "
                    + "lock service (a typo in fencing.issuer.etcd.endpoints or "
                    + "fencing.issuer.zookeeper.connect-string, a test cluster, a new empty one) "
                    + "counts from its own start; point it back rather than set an offset"
                    + (where.isEmpty() ? "" : " (this one: " + where + ")")
                    + ". A lock service restarted without its data (a Hazelcast CP Subsystem reset, "
                    + "or its whole cluster restarted without CP persistence) also counts from its start again: "
                    + "then this is a move. If it is the right one, this is what a move to a new issuer (a JDBC lease "
                    + "table to ZooKeeper, an old ensemble to a new one) without fencing.issuer.offset.base looks "
                    + "like: set fencing.issuer.offset.base above "
                    + highest + ", with headroom, under a fencing.issuer.offset.name of its own, on every instance"
                    + (stored.isEmpty() ? "" : " (offsets stored so far, none high enough: " + list(stored) + ")");
        } else {
            fix = "The offset base " + base + " is too low for this fence store: choose one above " + highest
                    + ", with headroom, under a new fencing.issuer.offset.name (a stored base never changes), on "
                    + "every instance" + (stored.isEmpty() ? "" : " (offsets stored so far: " + list(stored) + ")");
        }
        return "The token issuer's counter is " + counter + (offset != null ? " (with fencing.issuer.offset.base="
                + base + ")" : "") + " (" + name + ": one sequence for every resource), below the fence store's "
                + "highest max_seen " + highest + ": every write to a resource whose max_seen is above " + counter
                + " would be refused as stale, until the issuer counts past it. " + fix + " (see docs/issuers.md, "
                + "\"Moving to another issuer\")";
    }

    /**
     * A warning when the fence store holds no max_seen at all while the issuer lists resources it issued tokens for
     * (the JDBC lease table): a fence table of another name than the other instances' (a typo, created by
     * {@code initialize-schema=always}) is a second fence, and a trial's instance on one accepted token 1 after the
     * other's 2. {@code null} when either is empty, the issuer lists nothing, or the store cannot be read.
     */
    static String emptyBesideIssued(TokenIssuer issuer, FenceInventory fences) {
        TokenIssuer counted = issuer instanceof SigningTokenIssuer signing ? signing.delegate() : issuer;
        if (!(counted instanceof IssuedResources known) || fences == null) {
            return null;
        }
        try {
            if (!fences.resources(null, 1).isEmpty()) {
                return null;
            }
            List<String> issued = known.issuedResources(null, 3);
            if (issued.isEmpty()) {
                return null;
            }
            return "The fence store holds no max_seen, while the token issuer (" + counted.getClass().getSimpleName()
                    + ") has issued tokens for " + issued.stream().map(r -> "'" + FencingToken.printable(r) + "'")
                    .collect(java.util.stream.Collectors.joining(", ")) + (issued.size() == 3 ? ", ..." : "")
                    + ". If other instances fence these resources in a fence table of another name "
                    + "(fencing.store.jdbc.table), this one is a second fence: each accepts what the other has seen "
                    + "surpassed. Give every instance the same table. Nothing to do on a first deploy whose locks "
                    + "were taken before any fenced write";
        } catch (RuntimeException e) {
            return null; // advisory: a store or issuer that cannot be listed says so elsewhere
        }
    }

    /**
     * For an issuer with a counter per resource (the JDBC lease, Redisson): the first {@value #SAMPLE} resources of
     * the store whose counter is below their max_seen, and what to do, or {@code null} when none is (or the issuer
     * counts one sequence, or the store cannot tell a resource's max_seen). Their next tokens would be refused until
     * each counter passes it: a lease table on another database, restored from an older backup, or a Redis restart
     * without persistence. Logged, not fatal: the repair (the actuator's floor raise) needs the application running.
     */
    static String countersBelow(TokenIssuer issuer, FenceInventory fences,
                                Supplier<Map<String, Long>> storedOffsets) {
        TokenIssuer counted = issuer instanceof SigningTokenIssuer signing ? signing.delegate() : issuer;
        if (!(counted instanceof IssuedTokens tokens) || tokens.oneSequence() || fences == null) {
            return null;
        }
        Map<String, String> below = new LinkedHashMap<>();
        int examined = 0;
        long highest = 0;
        try {
            for (String resource : fences.resources(null, SAMPLE)) {
                // a family's floor (compaction's): a key of the family without a row of its own is judged against
                // it, and gets what the issuer issues to such a key (a move to the lease after compaction left only
                // floors, and every key was refused with nothing said at startup)
                String family = FenceSql.familyOfFloorKey(resource);
                examined++;
                OptionalLong maxSeen = fences.maxSeen(resource);
                long counter = tokens.highestIssued(family != null ? family + ":" : resource);
                if (maxSeen.isPresent() && counter < maxSeen.getAsLong()) {
                    below.put(family != null ? family + ":* (the family's floor)" : resource, "counter " + counter
                            + ", max_seen " + maxSeen.getAsLong());
                    highest = Math.max(highest, maxSeen.getAsLong());
                }
            }
        } catch (RuntimeException e) {
            log.warn("Could not compare the token issuer's counters with the fence store's max_seen at startup ("
                    + PROPERTY + "), the check is skipped: " + e);
            return null;
        }
        if (below.isEmpty()) {
            return null;
        }
        boolean administered = fences instanceof dev.fencing.recovery.FenceAdmin;
        StringBuilder listed = new StringBuilder();
        below.entrySet().stream().limit(5).forEach(e -> listed.append(listed.isEmpty() ? "" : "; ")
                .append("'").append(e.getKey()).append("': ").append(e.getValue()));
        long ownBase = counted instanceof OffsetTokenIssuer offset ? offset.base() : 0;
        Map<String, Long> above = new LinkedHashMap<>();
        storedOffsets.get().forEach((migration, base) -> {
            if (base > ownBase) {
                above.put(migration, base);
            }
        });
        if (!above.isEmpty()) {
            // the old issuer of a move: raising its counters would hand out tokens among the new issuer's
            return "The token issuer's counters (" + counted.getClass().getSimpleName() + ": one per resource) are "
                    + "below the fence store's max_seen for " + below.size() + " of the first " + examined
                    + " resources (" + listed + (below.size() > 5 ? "; ..." : "") + "), and an issuer migration "
                    + "stored a base above this issuer's range: " + list(above) + ". This application issues the "
                    + "tokens of the old issuer of that move, which the new issuer's holders have written past: its "
                    + "next tokens are refused as stale, as they should be. Stop it, or configure it as the move's "
                    + "instances are (fencing.issuer.offset.name and fencing.issuer.offset.base, with the new "
                    + "issuer); do not raise its counters (the floor raise leaves them below the base). " + PROPERTY
                    + "=false turns this check off";
        }
        return "The token issuer's counters (" + counted.getClass().getSimpleName() + ": one per resource) are below "
                + "the fence store's max_seen for " + below.size() + " of the first " + examined + " resources ("
                + listed + (below.size() > 5 ? "; ..." : "") + "): their next tokens will be refused as stale until "
                + "each counter passes its max_seen. This is what an issuer table on another database (a @Primary "
                + "DataSource moved), one restored from an older backup, or a Redis restart without persistence "
                + "looks like, and so does an issuer pointed elsewhere than the other instances' (another Redis, "
                + "Redis database index or key prefix, another lease table): its locks are not theirs, so this "
                + "instance has no mutual exclusion with the other instances, and the fence compares tokens of two "
                + "counters; give every instance the same lock service settings before raising any counter. If the "
                + "issuer is the right one, raise its counters: " + (administered
                ? "POST /actuator/fencing {\"afterRestore\": true, \"atLeast\": N} with N the store's highest "
                + "max_seen (at least " + highest + "; fencing.admin.enabled=true) raises every counter and max_seen "
                + "to N"
                : "an R2DBC store has no admin operations, so run the floor raise in Java, new FloorRaise(new "
                + "JdbcFenceAdmin(a JdbcFenceStore on the same table), ..., this issuer, ...).raiseAll(N, actor) with "
                + "N at least " + highest + ", which raises every counter and max_seen to N") + "; otherwise point "
                + "the issuer at its own table (docs/operations.md, \"Backup and restore of the fence table\"). A "
                + "max_seen far above its counter with no such move is what a token no issuer produced looks like (a "
                + "forged or hand-made Fencing-Token header, when tokens are not signed): then lower that resource's "
                + "max_seen to its highest issued token instead, " + (administered ? "POST "
                + "/actuator/fencing/{resource}" : "with a MaxSeenReset over a JdbcFenceAdmin")
                + " (docs/operations.md, \"When max_seen is ahead of every token\"), "
                + "and sign tokens. Do not reset a resource through an instance whose issuer is not the one that "
                + "issued its tokens: the reset lowers max_seen to what that issuer says. " + PROPERTY
                + "=false turns this check off";
    }

    private static String list(Map<String, Long> offsets) {
        StringBuilder text = new StringBuilder();
        offsets.forEach((migration, base) -> text.append(text.isEmpty() ? "" : ", ").append("'").append(migration)
                .append("'=").append(base));
        return text.toString();
    }
}

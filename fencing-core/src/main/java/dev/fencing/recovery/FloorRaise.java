package dev.fencing.recovery;

import dev.fencing.metrics.AdminMetrics;
import dev.fencing.retention.CounterFloors;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.retention.ResourceFamily;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.token.FencingToken;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * The step after restoring an older backup of the fence table, before traffic resumes: a restore lowers max_seen, so
 * tokens issued since the backup (some held by zombies) would be accepted again. It raises max_seen of every resource
 * in the store to at least the issuer's highest issued token for it, and to at least a value the operator gives (for
 * an issuer restored too, or resources created after the backup); it never lowers anything, so running it twice
 * changes nothing the second time. A resource whose lease is held now is raised to one below the issuer's highest
 * token, so that the current holder's token (the highest, with an exact issuer) is still accepted; every other token
 * stays refused. Each raise is counted ({@link AdminMetrics}, outcome {@code raised}) and the run is logged at WARNING.
 * When the issuer lists what it issued for ({@link IssuedResources}: the JDBC lease table), resources the restored
 * store lacks are raised too, and so is the floor of every family of a key it sees (and of each family named): a key
 * created after the backup has no row, and is judged against its family's floor.
 * A family's floor (the state of folded resources, {@link dev.fencing.retention.FenceCompaction}) is raised to at
 * least what the issuer issues to a resource of the family that has no state of its own. With a value to raise to
 * and an issuer with counters per resource ({@link CounterFloors}: the JDBC lease, Redisson), each resource's counter
 * (and each family's floor, {@link IssuerFloors}) in the issuer is raised to the same target first, so that the
 * issuer's next tokens clear it even when its counters were restored with the store or reset.
 * Run it with the writers stopped: a token that got in between the restore and the raise keeps its row's holder, and
 * its holder could write again if its token is the target itself.
 * With the bases of issuer migrations ({@link #withStoredBases}), a raise whose target for some resource is below the
 * highest stored base is refused before anything changes: the migration's issuer hands out tokens above that base,
 * which the answering issuer (the old one, or the new one read without its offset) does not count.
 */
public final class FloorRaise {

    private static final System.Logger LOG = System.getLogger(FloorRaise.class.getName());

    /** How many resources one page of the listing holds. */
    static final int PAGE = 500;

    /** How many families one run raises the floors of; the rest are said in a warning (a test lowers it). */
    int familyBound = 100_000;

    private final FenceAdmin admin;
    private final FenceInventory inventory;
    private final IssuedTokens issued;
    private final AdminMetrics metrics;
    private final MigrationBases bases;

    /**
     * @param admin     the store whose max_seen is raised
     * @param inventory the same store's listing
     * @param issued    the issuer of the store's tokens, or {@code null} when it cannot tell (then only an explicit
     *                  value is raised to)
     * @param metrics   where raises are counted
     */
    public FloorRaise(FenceAdmin admin, FenceInventory inventory, IssuedTokens issued, AdminMetrics metrics) {
        this(admin, inventory, issued, metrics, MigrationBases.NONE);
    }

    private FloorRaise(FenceAdmin admin, FenceInventory inventory, IssuedTokens issued, AdminMetrics metrics,
                       MigrationBases bases) {
        this.admin = Objects.requireNonNull(admin, "admin");
        this.inventory = Objects.requireNonNull(inventory, "inventory");
        this.issued = issued;
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.bases = bases;
    }

    /**
     * This raise, refusing (before it changes anything) to raise any resource to less than the highest base of the
     * issuer migrations {@code storedBases} reads at each run (name to base, {@code issuerBase::storedBases}; an empty
     * map when none is stored): that migration's issuer hands out tokens above its base, and a floor below it would
     * let them write again.
     */
    public FloorRaise withStoredBases(Supplier<Map<String, Long>> storedBases) {
        return new FloorRaise(admin, inventory, issued, metrics, new MigrationBases(storedBases));
    }

    /**
     * Raises every resource's max_seen to at least the issuer's highest issued token for it (one below it while a
     * lease on it is held) and at least {@code atLeast}.
     *
     * @param atLeast a floor for every resource, 0 for none
     * @param actor   who asks, for the log
     * @throws IllegalArgumentException when {@code actor} is blank, {@code atLeast} is negative or
     *                                  {@link Long#MAX_VALUE} (no token above it), or there is neither
     *                                  an issuer nor a positive {@code atLeast} (nothing to raise to); nothing changed
     */
    public FloorRaiseResult raiseAll(long atLeast, String actor) {
        return raiseAll(atLeast, actor, List.of());
    }

    /**
     * {@link #raiseAll(long, String)}, and also the resources named in {@code alsoResources} whether the store holds
     * them or not: resources created after the backup, which the restored table does not list (a resource without a
     * row gets one at its floor).
     *
     * @throws IllegalArgumentException as {@link #raiseAll(long, String)}, or when a named resource is blank; nothing
     *                                  changed
     */
    public FloorRaiseResult raiseAll(long atLeast, String actor, Collection<String> alsoResources) {
        return raiseAll(atLeast, actor, alsoResources, List.of());
    }

    /**
     * {@link #raiseAll(long, String, Collection)}, and also the floors of the families named in {@code alsoFamilies}
     * ({@code accounts} for the keys {@code accounts:42}): a family none of whose keys the store or the issuer lists
     * gets a floor, so that its keys created after the backup are judged against it. The families of the keyed
     * resources listed are raised without being named.
     *
     * @throws IllegalArgumentException as {@link #raiseAll(long, String)}, or when a named resource or family is
     *                                  blank or has a control character; nothing changed
     */
    public FloorRaiseResult raiseAll(long atLeast, String actor, Collection<String> alsoResources,
                                     Collection<String> alsoFamilies) {
        for (String family : alsoFamilies) {
            if (family == null || family.isBlank()) {
                throw new IllegalArgumentException("'" + family + "' named as a family for the floor raise is not a "
                        + "family (the text before a key's last ':', as 'accounts' of 'accounts:42')");
            }
        }
        for (String resource : alsoResources) {
            if (resource == null || resource.isBlank()) {
                throw new IllegalArgumentException("a resource named for the floor raise is blank");
            }
            checkNoControlCharacter("resource", resource);
        }
        for (String family : alsoFamilies) {
            checkNoControlCharacter("family", family);
        }
        if (actor == null || actor.isBlank()) {
            throw new IllegalArgumentException("actor (who asks for the floor raise) must not be blank");
        }
        if (atLeast < 0) {
            throw new IllegalArgumentException("the floor to raise every resource to must not be negative, was "
                    + atLeast);
        }
        if (atLeast == Long.MAX_VALUE) {
            throw new IllegalArgumentException("floor raise asked by " + actor + " refused, nothing changed: atLeast "
                    + atLeast + " is the top of the token range, which leaves no token above it: every write of every "
                    + "resource would be refused for good, and an issuer counting per resource could issue none. Give "
                    + "a value above every token issued and far below the top (docs/operations.md)");
        }
        if (issued == null && atLeast == 0) {
            throw new IllegalArgumentException("floor raise asked by " + actor + " has nothing to raise to: no issuer "
                    + "is known to tell its highest tokens, and no value was given");
        }
        if (atLeast > 0 && issued != null && issued.oneSequence()) {
            long counter = issued.highestIssued("");
            if (atLeast > counter) {
                // its counter cannot be raised: every write would be refused until the sequence passed atLeast
                throw new IllegalArgumentException("floor raise asked by " + actor + " refused, nothing changed: "
                        + "atLeast " + atLeast + " is above the issuer's current counter " + counter + ", one "
                        + "sequence for every resource (ZooKeeper's zxid, etcd's revision) that the raise cannot "
                        + "move: every write would be refused as stale until the sequence passed " + atLeast
                        + ". Give at most " + counter + ", or leave atLeast out (the raise reads the counter)");
            }
        }
        // each named resource and family read once first: one the store cannot place (no route behind a routing
        // store) is refused here, before anything changed, not halfway through the raise
        for (String resource : alsoResources) {
            admin.maxSeen(resource);
        }
        for (String family : alsoFamilies) {
            admin.maxSeen(FenceSql.familyFloorKey(family));
        }
        Map.Entry<String, Long> top = bases.highest();
        if (top != null && atLeast < top.getValue()) {
            // every target must clear the migration's base: checked for all before any is raised
            run(atLeast, alsoResources, alsoFamilies, new Tally(top, actor));
        }
        Tally tally = new Tally(null, actor);
        tally.migration = top;
        try {
            run(atLeast, alsoResources, alsoFamilies, tally);
        } catch (RuntimeException e) {
            // what was raised stays raised (a raise never lowers): the run says so, with who asked
            long raisedSoFar = tally.raised;
            long examinedSoFar = tally.examined;
            LOG.log(System.Logger.Level.WARNING, () -> "Floor raise after restore by " + actor + " failed after "
                    + "raising " + raisedSoFar + " of " + examinedSoFar + " resources examined (" + e + "); those "
                    + "raised stay raised, the rest are as they were: fix the cause and run it again (it changes "
                    + "nothing already raised)");
            throw e;
        }
        long raised = tally.raised;
        long examined = tally.examined;
        if (tally.familiesLeft > 0) {
            long left = tally.familiesLeft;
            LOG.log(System.Logger.Level.WARNING, () -> "Floor raise after restore by " + actor + ": the floors of "
                    + "the first " + familyBound + " families were raised, and " + left + " keys of further "
                    + "families were seen whose floors were not (too many families to hold at once): their keys "
                    + "without a row of their own are not covered; run it again naming those families, or keep the "
                    + "writers stopped until every lease taken before the restore has expired");
        }
        String to = issued == null ? "to at least " + atLeast
                : "to the issuer's highest tokens" + (atLeast > 0 ? ", at least " + atLeast : "");
        LOG.log(System.Logger.Level.WARNING, () -> "Floor raise after restore by " + actor + ": " + raised + " of "
                + examined + " resources raised (" + to + ")");
        return new FloorRaiseResult(examined, raised, atLeast, actor);
    }

    /**
     * Refuses a named resource or family with a control character: no token names one (a key ending in U+001F is a
     * family's floor row), and it would get a row of its own, or fail the run in the database, after the rest changed.
     */
    private static void checkNoControlCharacter(String what, String name) {
        for (int i = 0; i < name.length(); i++) {
            if (Character.isISOControl(name.charAt(i))) {
                throw new IllegalArgumentException(what + " '" + FencingToken.printable(name) + "' named for the floor "
                        + "raise contains a control character at index " + i + ": no token names such a " + what
                        + "; nothing changed");
            }
        }
    }

    /**
     * Raises (or, with a base to clear, checks) the store's resources, the issuer's and {@code alsoResources}, then
     * the floor of every family among them and {@code alsoFamilies} that has none: a key of the family created after
     * the backup has no row, and without a floor its first token would be accepted whatever its value.
     */
    private void run(long atLeast, Collection<String> alsoResources, Collection<String> alsoFamilies, Tally tally) {
        walk(inventory::resources, false, atLeast, tally);
        if (issued instanceof IssuedResources known) {
            // resources the issuer knows and the restored table may lack (created after the backup)
            walk(known::issuedResources, true, atLeast, tally);
        }
        raiseEach(new TreeSet<>(alsoResources), true, atLeast, tally);
        tally.families.addAll(alsoFamilies);
        List<String> floors = tally.families.stream().map(FenceSql::familyFloorKey).toList();
        raiseEach(floors, true, atLeast, tally);
    }

    /**
     * How many resources were looked at and how many raised; with a migration's base ({@code checking}), a pass that
     * raises nothing and refuses the first target below the base.
     */
    private static final class Tally {
        final Map.Entry<String, Long> checking;
        final String actor;
        /** The migration with the highest stored base, when one is: its issuer's range starts there. */
        Map.Entry<String, Long> migration;
        long examined;
        long raised;
        /**
         * The families of the keyed resources looked at, whose floors are raised last (after every resource: a key
         * without a row of its own may read as its family's floor once that is raised). At most
         * {@link FloorRaise#familyBound}: a table whose keys each make a family of their own (a colon in the key) is
         * not held in memory at once.
         */
        final Set<String> families = new TreeSet<>();
        /** Keys of families seen beyond the bound, whose floors this run leaves as they are. */
        long familiesLeft;
        /** Family floors read while resources are raised (floors are raised last), as many as families are held. */
        private final Map<String, Long> floors = new HashMap<>();

        /** The store's floor of {@code family}, 0 when none; read once per run for the families held. */
        long floor(String family, FenceAdmin admin) {
            Long known = floors.get(family);
            if (known != null) {
                return known;
            }
            long floor = admin.maxSeen(FenceSql.familyFloorKey(family)).orElse(0);
            if (floors.size() < families.size() + 1) {
                floors.put(family, floor);
            }
            return floor;
        }

        Tally(Map.Entry<String, Long> checking, String actor) {
            this.checking = checking;
            this.actor = actor;
        }
    }

    /** Raises every resource of {@code pages}, page by page ({@code resources(after, limit)}). */
    private void walk(BiFunction<String, Integer, List<String>> pages, boolean onlyWithoutMaxSeen, long atLeast,
                      Tally tally) {
        String after = null;
        while (true) {
            List<String> page = pages.apply(after, PAGE);
            raiseEach(page, onlyWithoutMaxSeen, atLeast, tally);
            if (page.size() < PAGE) {
                return;
            }
            after = page.get(page.size() - 1);
        }
    }

    /**
     * Raises each of {@code resources}; with {@code onlyWithoutMaxSeen}, only those the store holds no max_seen for
     * (one it holds was raised from its own listing already).
     */
    private void raiseEach(Collection<String> resources, boolean onlyWithoutMaxSeen, long atLeast, Tally tally) {
        for (String resource : resources) {
            String family = FenceSql.isFloorKey(resource) ? null : ResourceFamily.of(resource);
            if (family != null && !tally.families.contains(family)) {
                if (tally.families.size() < familyBound) {
                    tally.families.add(family);
                } else {
                    tally.familiesLeft++;
                }
            }
            if (onlyWithoutMaxSeen) {
                long value = admin.maxSeen(resource).orElse(0);
                // listed and raised already (a floor row holding 0, which MariaDB's check locks, is none); but a
                // value equal to its family's floor may be that floor answering for a resource with no state of its
                // own (the in-memory store's maxSeen of a folded resource): raised on its own, below its own target
                if (value > 0 && (family == null || value != tally.floor(family, admin))) {
                    continue;
                }
            }
            tally.examined++;
            if (tally.checking != null) {
                long target = target(resource, FenceSql.familyOfFloorKey(resource), atLeast);
                if (target < tally.checking.getValue()) {
                    throw new IllegalArgumentException("floor raise asked by " + tally.actor + " refused, nothing "
                            + "changed: " + MigrationBases.tooLow("the floor of resource '"
                            + FencingToken.printable(resource) + "' (" + (issued == null ? "at least " + atLeast
                            : "the issuer's highest token" + (atLeast > 0 ? ", at least " + atLeast : "")) + ")",
                            target, tally.checking, issued != null));
                }
            } else if (raise(resource, atLeast, tally.migration, tally.actor)) {
                tally.raised++;
            }
        }
    }

    /** What {@code resource} (the floor of {@code family}, when not {@code null}) is raised to. */
    private long target(String resource, String family, long atLeast) {
        long target = atLeast;
        if (issued != null && family != null) {
            // at least what the issuer issues to a resource of the family without state
            target = Math.max(target, issued.highestIssued(family + ":"));
        } else if (issued != null) {
            long highest = issued.highestIssued(resource);
            if (highest > 0 && issued.isHeld(resource)) {
                highest--; // the current holder's token is the highest one: it stays acceptable
            }
            target = Math.max(target, highest);
        }
        return target;
    }

    /**
     * Raises one resource; {@code true} when its max_seen was below the target. With a stored {@code migration}, the
     * issuer's counters are raised only when they count in the migration's range (the offset issuer): those of the
     * old issuer, raised to the target, would hand out tokens among the new issuer's (a trial: the old instance, told
     * to raise its counters by its startup warning, wrote over the new issuer's holders).
     */
    private boolean raise(String resource, long atLeast, Map.Entry<String, Long> migration, String actor) {
        // a family's floor (compaction) has a key of the family and an invisible U+001F: null for a resource
        String family = FenceSql.familyOfFloorKey(resource);
        long target = target(resource, family, atLeast);
        if (target <= 0) {
            return false;
        }
        if (atLeast > 0 && issued instanceof CounterFloors counters
                && (migration == null || issued.highestIssued(family != null ? family + ":" : resource)
                >= migration.getValue())) {
            // the issuer's counters may have been restored or reset too: its next tokens must clear the floor, or
            // every acquisition is refused until its counter passes it, one at a time
            if (family == null) {
                counters.raiseResourceFloor(resource, target);
            } else if (counters instanceof IssuerFloors floors) {
                floors.raiseFamilyFloor(family, target);
            }
        }
        OptionalLong current = admin.maxSeen(resource);
        if (current.isPresent() && current.getAsLong() >= target) {
            return false;
        }
        admin.raiseFloor(resource, target);
        metrics.raised();
        long was = current.orElse(0);
        long to = target;
        String what = family != null ? "floor of family '" + family + "'" : "max_seen of resource '" + resource + "'";
        LOG.log(System.Logger.Level.INFO, () -> what + " raised from " + was + " to " + to + " by " + actor);
        return true;
    }
}

package dev.fencing.recovery;

import dev.fencing.metrics.AdminMetrics;
import dev.fencing.retention.ResourceFamily;
import dev.fencing.store.sql.FenceSql;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * The way back after a bad token raised a resource's max_seen (a forged {@code Long.MAX_VALUE}, a bug): lowers it to
 * the issuer's highest issued token for the resource, never below, so the next real holder is accepted while every
 * token issued before stays refused (no zombie window). A resource the issuer issued nothing for is forgotten only
 * with the explicit value 0: an issuer that answers 0 may be the wrong one. An explicit value needs an explicit
 * override and is still never taken below the issuer's highest. Refuses while a lease on the resource is held unless
 * forced; every reset and refusal is logged at WARNING (who, what, old, new) and counted ({@link AdminMetrics}). With
 * the bases of issuer migrations ({@link #withStoredBases}), a reset below the highest stored base is refused: the
 * migration's issuer hands out tokens above it, which the answering issuer may not know.
 */
public final class MaxSeenReset {

    private static final System.Logger LOG = System.getLogger(MaxSeenReset.class.getName());
    private static final String ISSUERS_HIGHEST = "the issuer's highest issued token";

    /** How many of the store's resources a reset through a one-sequence issuer compares with its counter. */
    static final int SEQUENCE_SAMPLE = 100;

    private final FenceAdmin admin;
    private final IssuedTokens issued;
    private final AdminMetrics metrics;
    private final MigrationBases bases;

    /**
     * @param admin   the store whose max_seen is lowered
     * @param issued  the issuer of the store's tokens, or {@code null} when it cannot tell (then only an explicit
     *                value with the override is accepted)
     * @param metrics where resets are counted
     */
    public MaxSeenReset(FenceAdmin admin, IssuedTokens issued, AdminMetrics metrics) {
        this(admin, issued, metrics, MigrationBases.NONE);
    }

    private MaxSeenReset(FenceAdmin admin, IssuedTokens issued, AdminMetrics metrics, MigrationBases bases) {
        this.admin = Objects.requireNonNull(admin, "admin");
        this.issued = issued;
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.bases = bases;
    }

    /**
     * This reset, refusing to lower max_seen below the highest base of the issuer migrations {@code storedBases}
     * reads at each reset (name to base, {@code issuerBase::storedBases}; an empty map when none is stored): a
     * migration's issuer hands out tokens above its base, so an issuer answering below it (the old one, mid-migration)
     * cannot vouch for them.
     */
    public MaxSeenReset withStoredBases(Supplier<Map<String, Long>> storedBases) {
        return new MaxSeenReset(admin, issued, metrics, new MigrationBases(storedBases));
    }

    /**
     * Lowers max_seen of {@code resource} to the issuer's highest issued token for it.
     *
     * @param actor who asks (an operator, a CLI user, an authenticated principal), for the log
     * @param force reset even while a lease on the resource is held (its holder's next write is then refused too)
     * @throws ResetRefusedException    when no issuer is known, or a lease is held and {@code force} is false
     * @throws IllegalArgumentException when the resource or actor is blank, the resource has no max_seen, or max_seen
     *                                  is not above the highest issued token (nothing to lower)
     */
    public ResetResult toHighestIssued(String resource, String actor, boolean force) {
        check(resource, actor);
        if (issued == null) {
            throw refused(resource, actor, "Reset of resource '" + resource + "' refused: no issuer is known to "
                    + "bound it; give an explicit value with the override");
        }
        String forced = checkNotHeld(resource, actor, force);
        // max_seen before the issuer: a token issued and accepted after this read moves it, and the lowering, which
        // happens only while max_seen is still this value, is refused instead of undoing that token
        OptionalLong current = admin.maxSeen(resource);
        long highest = issued.highestIssued(resource);
        if (current.isPresent() && current.getAsLong() > highest) {
            checkSequenceNotBack(resource, current.getAsLong(), highest, actor);
        }
        return lower(resource, current, highest, highest, actor, ISSUERS_HIGHEST, forced);
    }

    /**
     * Lowers max_seen of {@code resource} to {@code value}, which the operator vouches for ({@code override}). When an
     * issuer is known, {@code value} must not be below its highest issued token.
     *
     * @throws ResetRefusedException    when {@code override} is false, or a lease is held and {@code force} is false
     * @throws IllegalArgumentException when the resource or actor is blank, {@code value} is negative, below the
     *                                  issuer's highest issued token or not below max_seen, or the resource has no
     *                                  max_seen
     */
    public ResetResult toValue(String resource, long value, String actor, boolean override, boolean force) {
        check(resource, actor);
        if (value < 0) {
            throw new IllegalArgumentException("new max_seen for resource '" + resource + "' must not be negative, was "
                    + value);
        }
        if (!override) {
            throw refused(resource, actor, "Reset of resource '" + resource + "' to the explicit value " + value
                    + " refused: an explicit value needs the override (the store cannot tell what was issued)");
        }
        long highest = -1;
        String forced = "";
        OptionalLong current = admin.maxSeen(resource); // before the issuer, as toHighestIssued reads it
        if (issued != null) {
            forced = checkNotHeld(resource, actor, force);
            highest = issued.highestIssued(resource);
            if (value < highest) {
                String message = "new max_seen " + value + " for resource '" + resource + "' is below the issuer's "
                        + "highest issued token " + highest + "; a holder of a token up to " + highest
                        + " could write again";
                // an attempt to reopen a zombie window leaves a trace, as a refusal does
                LOG.log(System.Logger.Level.WARNING, () -> "Reset refused as bad input: " + message + " (asked by "
                        + actor + ")");
                throw new IllegalArgumentException(message);
            }
        }
        return lower(resource, current, value, highest, actor, "an explicit value", forced);
    }

    /** Lowers max_seen from {@code current}, read before the issuer was, to {@code target}, while it is still that. */
    private ResetResult lower(String resource, OptionalLong current, long target, long highest, String actor,
                              String why, String forced) {
        if (current.isEmpty()) {
            throw FenceAdmin.unknownResource(resource);
        }
        Map.Entry<String, Long> top = bases.highest();
        if (top != null && target < top.getValue()) {
            throw refused(resource, actor, "Reset of resource '" + resource + "' refused: "
                    + MigrationBases.tooLow("the new max_seen (" + why + ")", target, top,
                    issued != null));
        }
        if (target == 0 && why.equals(ISSUERS_HIGHEST)) {
            // forgetting lets any token in as a first one: only on the operator's word (an issuer on the wrong lease
            // table answers 0 too, and a trial's reset through one let token 1 write after 2)
            throw refused(resource, actor, "Reset of resource '" + resource + "' refused: the issuer has issued no "
                    + "token for it, so the reset would forget it and accept any token as a first one. If its "
                    + "max_seen came from a bad token alone, forget it with the explicit value 0 and the override; if "
                    + "holders wrote it, this issuer is not theirs (another lease table, another lock service?)");
        }
        if (current.getAsLong() <= target) {
            throw new IllegalArgumentException("max_seen of resource '" + resource + "' is " + current.getAsLong()
                    + ", not above " + target + " (" + why + "); nothing to lower");
        }
        long previous;
        try {
            previous = admin.lowerMaxSeen(resource, target, current.getAsLong());
        } catch (ResetRefusedException e) {
            throw refused(actor, e);
        }
        metrics.lowered();
        LOG.log(System.Logger.Level.WARNING, () -> target == 0
                ? "Resource '" + resource + "' forgotten (max_seen was " + previous + "; " + why + " is 0): its fence "
                + "state is removed and its next token is a first one, in a compacted family judged against the "
                + "family's floor; by " + actor + forced
                : "max_seen of resource '" + resource + "' lowered from " + previous + " to " + target + " (" + why
                + ") by " + actor + forced);
        return new ResetResult(resource, previous, target, highest, actor);
    }

    /**
     * A one-sequence issuer (ZooKeeper's zxid, etcd's revision) counts above every token it issued, for every
     * resource, so every max_seen its holders wrote is at or below its counter. Other resources above it mean the
     * sequence went back (an ensemble or cluster that lost its data, another one at the same address), not a bad token
     * on this resource: lowering max_seen to the counter would let the old sequence's tokens up to max_seen write
     * again, a paused holder's among them. Refused; compares the store's highest max_seen, then up to
     * {@value #SEQUENCE_SAMPLE} resources.
     */
    private void checkSequenceNotBack(String resource, long current, long highest, String actor) {
        if (!(admin instanceof FenceInventory inventory)) {
            return;
        }
        if (!issued.oneSequence()) {
            checkCountersNotBack(inventory, resource, current, highest, actor);
            return;
        }
        OptionalLong top = inventory.highestMaxSeen();
        // another resource holds a max_seen above this one's, so above the counter (this one's moved meanwhile: the
        // lowering refuses that below, as a race)
        boolean topAbove = top.isPresent() && top.getAsLong() > current
                && admin.maxSeen(resource).orElse(current) == current;
        Above above = above(inventory, resource, other -> highest);
        if (above.count() == 0 && !topAbove) {
            return;
        }
        String which = above.count() == 0 ? "another resource has max_seen " + top.getAsLong()
                : "resource '" + above.example() + "' has max_seen " + above.maxSeen();
        throw refused(resource, actor, "Reset of resource '" + resource + "' refused: the issuer counts one sequence "
                + "for every resource and is at " + highest + " now, yet " + which + ", above it too (resources "
                + "other than this one above the counter, of the first " + above.looked() + " looked at: at least "
                + Math.max(above.count(), 1) + "). Either the issuer's sequence went back (a ZooKeeper ensemble or "
                + "etcd cluster that lost its data, or another one at the same address): lowering max_seen to "
                + highest + " would let tokens the old sequence issued up to " + current
                + " write again, a paused holder's among them; "
                + "treat it as a move to another issuer, with an offset above every token the old sequence issued "
                + "(docs/issuers.md, \"Moving to another issuer\"). Or the fence table is shared with an application "
                + "on another lock service, or those resources' max_seen came from bad tokens too: then lower this "
                + "one with an explicit value and the override");
    }

    /**
     * An issuer with a counter per resource (the JDBC lease table) whose counters went back for other resources too
     * (the lease table restored from an older backup, truncated, recreated; or an issuer on another table): other
     * resources it did issue tokens for hold a max_seen above its counter for them. That is not a bad token on this
     * resource, and lowering max_seen to the counter would let tokens handed out before the restore, up to max_seen,
     * write again, a paused holder's among them. The running issuer that handed them out knows (it answers no lower
     * than its own tokens), but the admin CLI's or a restarted instance's does not. Refused; compares up to
     * {@value #SEQUENCE_SAMPLE} resources of the store.
     */
    private void checkCountersNotBack(FenceInventory inventory, String resource, long current, long highest,
                                      String actor) {
        Above above = above(inventory, resource, other -> {
            long counter = issued.highestIssued(other);
            // a resource this issuer never counted (0) may be another application's, fenced by another issuer
            if (counter <= 0) {
                return Long.MAX_VALUE;
            }
            // in a compacted family the issuer issues above the family's floor, whatever the resource's own counter,
            // and the store judges a resource without state at that floor (a refused check leaves it a row, or a
            // slot, there): max_seen up to the issuer's floor is no sign of counters that went back. The issuer's
            // floor is what it answers for the family's key without a counter ("family:"), as FloorRaise reads it
            String family = FenceSql.isFloorKey(other) ? null : ResourceFamily.of(other);
            return family == null ? counter : Math.max(counter, issued.highestIssued(family + ":"));
        });
        if (above.count() == 0) {
            return;
        }
        throw refused(resource, actor, "Reset of resource '" + resource + "' refused: the issuer's counter for it is "
                + highest + ", yet other resources it issued tokens for are above their counters too (resource '"
                + above.example() + "' has max_seen " + above.maxSeen() + " with its counter at " + above.bound()
                + "; of the first " + above.looked() + " looked at: " + above.count() + "). The issuer's counters "
                + "went back (the lease table restored from an older backup, truncated or recreated), or this is an "
                + "issuer on another lease table: lowering max_seen to " + highest
                + " would let tokens handed out before, up to "
                + current + ", write again, a paused holder's among them. After a restore, raise the counters with "
                + "the floor raise (docs/operations.md, \"Backup and restore of the fence table\"). If those "
                + "resources' max_seen came from bad tokens too, lower this one with an explicit value and the "
                + "override");
    }

    /** What {@link #above} found: how many were above, of how many looked at, and the first of them. */
    private record Above(int count, int looked, String example, long maxSeen, long bound) {
    }

    /**
     * Looks at the first {@value #SEQUENCE_SAMPLE} resources of the store other than {@code resource} for a max_seen
     * above {@code bound} of the resource ({@link Long#MAX_VALUE}: not judged); asks the bound only of resources with
     * a max_seen.
     */
    private static Above above(FenceInventory inventory, String resource, ToLongFunction<String> bound) {
        List<String> sample = inventory.resources(null, SEQUENCE_SAMPLE);
        int count = 0;
        String example = null;
        long exampleValue = 0;
        long exampleBound = 0;
        for (String other : sample) {
            if (other.equals(resource)) {
                continue;
            }
            OptionalLong value = inventory.maxSeen(other);
            if (value.isEmpty()) {
                continue;
            }
            long limit = bound.applyAsLong(other);
            if (value.getAsLong() > limit && count++ == 0) {
                example = other;
                exampleValue = value.getAsLong();
                exampleBound = limit;
            }
        }
        return new Above(count, sample.size(), example, exampleValue, exampleBound);
    }

    /** Refuses while a lease is held, unless forced; returns what the log says of a forced reset ("" otherwise). */
    private String checkNotHeld(String resource, String actor, boolean force) {
        if (!issued.isHeld(resource)) {
            return "";
        }
        if (!force) {
            throw refused(resource, actor, "Reset of resource '" + resource + "' refused: a lease on it is held now; "
                    + "retry once it is released or expired, or force it (the holder's next write is then refused)");
        }
        return ", FORCED while a lease on it was held: its holder's next write is refused";
    }

    /** A refusal of the store's (it could not forget the resource in time): counted and logged as this class's. */
    private ResetRefusedException refused(String actor, ResetRefusedException e) {
        metrics.refused();
        LOG.log(System.Logger.Level.WARNING, () -> e.getMessage() + " (asked by " + actor + ")");
        return e;
    }

    private ResetRefusedException refused(String resource, String actor, String message) {
        metrics.refused();
        LOG.log(System.Logger.Level.WARNING, () -> message + " (asked by " + actor + ")");
        return new ResetRefusedException(resource, message);
    }

    private static void check(String resource, String actor) {
        if (resource == null || resource.isBlank()) {
            throw new IllegalArgumentException("resource must not be blank");
        }
        for (int i = 0; i < resource.length(); i++) {
            if (Character.isISOControl(resource.charAt(i))) {
                throw new IllegalArgumentException("resource '" + resource + "' contains a control character at index "
                        + i + ": no token names such a resource (a key ending in U+001F is a family's floor row, "
                        + "which only compaction changes)");
            }
        }
        if (actor == null || actor.isBlank()) {
            throw new IllegalArgumentException("actor (who asks for the reset of '" + resource
                    + "') must not be blank");
        }
    }
}

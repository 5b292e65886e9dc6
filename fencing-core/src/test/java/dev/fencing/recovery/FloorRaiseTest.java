package dev.fencing.recovery;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.retention.CounterFloors;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The floor raise after a restore, on the in-memory store: max_seen goes up to the issuer's highest token (one below
 * it while a lease is held, so the holder keeps writing), to an explicit value, never down, and a second run changes
 * nothing.
 */
class FloorRaiseTest {

    private static final Duration WAIT = Duration.ofSeconds(1);

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();

    private FloorRaise raise(IssuedTokens issued) {
        return new FloorRaise(store, store, issued, new AdminMetrics(registry));
    }

    private double raisedCount() {
        return registry.get(AdminMetrics.RESETS).tag("outcome", "raised").counter().count();
    }

    private void write(FencingToken token) throws Throwable {
        store.fence(token.resource(), token, () -> null);
    }

    /** A restore: max_seen of {@code resource} back to {@code value}, as the older backup had it. */
    private void restore(String resource, long value) {
        store.lowerMaxSeen(resource, value);
    }

    @Test
    void afterARestoreTheZombieIsRefusedAndTheCurrentHolderAccepted() throws Throwable {
        FencingToken old;
        try (Lease first = issuer.acquire("ledger", WAIT)) {
            old = first.token();
            write(old);
        } // the backup is taken here: max_seen 1
        Lease zombieLease = issuer.acquire("ledger", WAIT);
        FencingToken zombie = zombieLease.token();
        write(zombie);
        zombieLease.close(); // its holder paused; the lease is gone, the token is not
        Lease current = issuer.acquire("ledger", WAIT);
        write(current.token());
        restore("ledger", old.value());

        FloorRaiseResult result = raise(issuer).raiseAll(0, "ops");

        assertThat(result.examined()).isEqualTo(1);
        assertThat(result.raised()).isEqualTo(1);
        assertThat(raisedCount()).isEqualTo(1);
        assertThatThrownBy(() -> write(zombie)).isInstanceOf(TokenRejectedException.class);
        write(current.token()); // the holder's token is the issuer's highest, and its lease is held: accepted
        current.close();
        assertThat(store.maxSeen("ledger")).hasValue(current.token().value());
    }

    @Test
    void aResourceWithoutAHeldLeaseIsRaisedToTheHighestItself() throws Throwable {
        FencingToken last;
        try (Lease a = issuer.acquire("r", WAIT)) {
            write(a.token());
        }
        try (Lease b = issuer.acquire("r", WAIT)) {
            last = b.token();
            write(last);
        }
        restore("r", 1);
        raise(issuer).raiseAll(0, "ops");
        assertThat(store.maxSeen("r")).hasValue(last.value());
        assertThatThrownBy(() -> write(new FencingToken("r", last.value(), "someone-else")))
                .isInstanceOf(DuplicateTokenException.class);
    }

    /**
     * The issuer's counters restored with the store (the JDBC lease table in the same database): an explicit value
     * raises them too, so the next holder's token clears the new floor at once; before, each acquisition was refused
     * until the counter had crept past it (an operator's trial: tokens 16 to 19 stale, 20 duplicate, 21 accepted).
     * A family's floor in the issuer goes up with the store's.
     */
    @Test
    void anExplicitValueRaisesTheIssuersRestoredCountersSoTheNextTokenIsAccepted() throws Throwable {
        try (Lease lease = issuer.acquire("accounts:1", WAIT)) { // the restored counter: 1
            write(lease.token());
        }
        store.raiseFloor("accounts\u001f", 10);              // a family floor compaction left in the store

        raise(issuer).raiseAll(40, "ops");

        assertThat(store.maxSeen("accounts:1")).hasValue(40);
        try (Lease next = issuer.acquire("accounts:1", WAIT)) {
            assertThat(next.token().value()).isEqualTo(41);
            write(next.token());                              // accepted at once
        }
        try (Lease fresh = issuer.acquire("accounts:2", WAIT)) {
            assertThat(fresh.token().value()).as("a key of the raised family").isGreaterThan(40);
        }
        assertThat(raise(issuer).raiseAll(40, "ops").raised()).as("a second run").isZero();
    }

    /**
     * An issuer with counters per resource but no family floors (Redisson): a value raises its counters as well; a
     * family floor the store holds is raised in the store alone (the issuer has none to raise).
     */
    @Test
    void anIssuerWithCountersOnlyHasThemRaisedAndItsFamilyFloorsLeftAlone() throws Throwable {
        java.util.Map<String, Long> counters = new java.util.TreeMap<>();
        class CountersOnly implements IssuedTokens, CounterFloors {
            @Override
            public long highestIssued(String resource) {
                return counters.getOrDefault(resource, 0L);
            }

            @Override
            public boolean isHeld(String resource) {
                return false;
            }

            @Override
            public void raiseResourceFloor(String resource, long floor) {
                counters.merge(resource, floor, Math::max);
            }
        }
        write(new FencingToken("ledger", 7, "h"));
        counters.put("ledger", 1L);                           // reset after max_seen 7
        store.raiseFloor("accounts\u001f", 3);

        FloorRaiseResult result = raise(new CountersOnly()).raiseAll(9, "ops");

        assertThat(result.raised()).isEqualTo(2);
        assertThat(counters).containsExactly(java.util.Map.entry("ledger", 9L));
        assertThat(store.maxSeen("ledger")).hasValue(9);
        assertThat(store.maxSeen("accounts\u001f")).hasValue(9);
        raise(new CountersOnly()).raiseAll(0, "ops");          // without a value: the counters are not touched
        assertThat(counters).containsExactly(java.util.Map.entry("ledger", 9L));
    }

    @Test
    void anExplicitValueRaisesEveryResourceAndNothingIsLowered() throws Throwable {
        write(new FencingToken("a", 5, "h"));
        write(new FencingToken("b", 50, "h"));
        FloorRaiseResult result = raise(null).raiseAll(20, "ops");
        assertThat(result.examined()).isEqualTo(2);
        assertThat(result.raised()).isEqualTo(1);
        assertThat(store.maxSeen("a")).hasValue(20);
        assertThat(store.maxSeen("b")).hasValue(50);
    }

    @Test
    void resourcesCreatedAfterTheBackupAreRaisedWhenNamed() throws Throwable {
        write(new FencingToken("a", 5, "h"));
        FloorRaiseResult result = raise(null).raiseAll(20, "ops", java.util.List.of("new:1", "a"));
        assertThat(result.examined()).as("a, new:1 and the floor of family new").isEqualTo(3);
        assertThat(result.raised()).isEqualTo(3);
        assertThat(store.maxSeen("new:1")).hasValue(20);
        assertThat(store.maxSeen(dev.fencing.store.sql.FenceSql.familyFloorKey("new"))).hasValue(20);
        assertThatThrownBy(() -> write(new FencingToken("new:1", 19, "zombie")))
                .isInstanceOf(TokenRejectedException.class);
        assertThatThrownBy(() -> raise(null).raiseAll(20, "ops", java.util.List.of(" ")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("blank");
    }

    /**
     * A key of a family created after the backup has no row in the restored store: the raise gives the family a floor
     * (the families of the keys it lists, and the families named), so that key's zombie is refused. Before, a trial
     * with ZooKeeper restored a table lacking {@code haacc:102}: its zombie token 125 overwrote the data after the
     * raise ("examined 1, raised 0"), though the docs promised N as the floor of resources created after the backup.
     */
    @Test
    void theFamiliesOfTheListedKeysAndTheNamedFamiliesGetAFloorSoNewKeysAreCovered() throws Throwable {
        write(new FencingToken("haacc:101", 120, "a"));           // in the backup
        // after the backup: haacc:102 written with 125 and 127, a key of "orders" with 130; neither restored

        FloorRaiseResult result = raise(null).raiseAll(200, "ops", java.util.List.of(), java.util.List.of("orders"));

        assertThat(result.raised()).as("haacc:101, the floors of haacc and orders").isEqualTo(3);
        assertThatThrownBy(() -> write(new FencingToken("haacc:102", 125, "zombie")))
                .isInstanceOf(TokenRejectedException.class)
                .hasMessageContaining("a newer token was seen for it (a newer holder's write, or a floor that "
                        + "compaction, a floor raise or a reset set)"); // no holder wrote haacc:102 here
        assertThatThrownBy(() -> write(new FencingToken("orders:7", 130, "zombie")))
                .isInstanceOf(TokenRejectedException.class);
        write(new FencingToken("haacc:102", 201, "next holder"));
        assertThat(store.maxSeen("ledger")).as("an unkeyed resource nobody named still has no row").isEmpty();
        assertThat(raise(null).raiseAll(200, "ops", java.util.List.of(), java.util.List.of("orders")).raised())
                .as("a second run").isZero();
        assertThatThrownBy(() -> raise(null).raiseAll(300, "ops", java.util.List.of(), java.util.List.of(" ")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is not a family");
        assertThat(store.maxSeen("haacc:101")).as("nothing changed by the refused run").hasValue(200);
    }

    /**
     * A one-sequence issuer's counter (ZooKeeper's zxid) cannot be raised, so a floor above it would refuse every
     * write until the sequence passed it: refused, nothing changed (a trial's 10^12 with the zxid at 115 was
     * accepted and locked the resources out for good).
     */
    @Test
    void aFloorAboveAOneSequenceIssuersCounterIsRefusedBeforeAnythingChanges() throws Throwable {
        IssuedTokens zxid = new IssuedTokens() {
            @Override
            public long highestIssued(String resource) {
                return 115;
            }

            @Override
            public boolean isHeld(String resource) {
                return false;
            }

            @Override
            public boolean oneSequence() {
                return true;
            }
        };
        write(new FencingToken("a", 5, "h"));
        assertThatThrownBy(() -> raise(zxid).raiseAll(1_000_000_000_000L, "ops"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("atLeast 1000000000000 is above the issuer's current counter 115")
                .hasMessageContaining("nothing changed");
        assertThat(store.maxSeen("a")).hasValue(5);
        raise(zxid).raiseAll(100, "ops");
        assertThat(store.maxSeen("a")).as("at most the counter: raised to it").hasValue(115);
    }

    /**
     * Keys that each make a family of their own (a colon in the key) are not all held in memory: past the bound, the
     * floors left are said in a warning.
     */
    @Test
    void familiesPastTheBoundAreLeftAndSaid() throws Throwable {
        for (int i = 0; i < 5; i++) {
            write(new FencingToken("t:" + i + ":1", 1, "h"));
        }
        FloorRaise bounded = raise(null);
        bounded.familyBound = 3;
        try (dev.fencing.LogCapture log = dev.fencing.LogCapture.of(FloorRaise.class)) {
            FloorRaiseResult result = bounded.raiseAll(3, "ops");
            assertThat(result.raised()).as("every key, and the floors of the first three families").isEqualTo(5 + 3);
            assertThat(log.records()).anySatisfy(r -> assertThat(r.getMessage())
                    .contains("the floors of the first 3 families were raised, and 2 keys of further families were "
                            + "seen whose floors were not"));
        }
        assertThat(store.maxSeen(dev.fencing.store.sql.FenceSql.familyFloorKey("t:2"))).hasValue(3);
        assertThat(store.maxSeen(dev.fencing.store.sql.FenceSql.familyFloorKey("t:4"))).isEmpty();
    }

    @Test
    void aSecondRunChangesNothing() throws Throwable {
        write(new FencingToken("a", 5, "h"));
        raise(null).raiseAll(20, "ops");
        FloorRaiseResult again = raise(null).raiseAll(20, "ops");
        assertThat(again.raised()).isZero();
        assertThat(raisedCount()).isEqualTo(1);
        assertThat(store.maxSeen("a")).hasValue(20);
    }

    @Test
    void manyResourcesArePagedThroughEveryOne() throws Throwable {
        int count = FloorRaise.PAGE * 2 + 7;
        for (int i = 0; i < count; i++) {
            write(new FencingToken("accounts:" + i, 1, "h"));
        }
        FloorRaiseResult result = raise(null).raiseAll(3, "ops");
        assertThat(result.examined()).as("every key and its family's floor").isEqualTo(count + 1);
        assertThat(result.raised()).isEqualTo(count + 1);
        assertThat(store.maxSeen(dev.fencing.store.sql.FenceSql.familyFloorKey("accounts"))).hasValue(3);
        for (int i = 0; i < count; i++) {
            assertThat(store.maxSeen("accounts:" + i)).hasValue(3);
        }
    }

    @Test
    void nothingToRaiseToOrBadArgumentsChangeNothing() throws Throwable {
        write(new FencingToken("a", 5, "h"));
        assertThatThrownBy(() -> raise(null).raiseAll(0, "ops")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nothing to raise to");
        assertThatThrownBy(() -> raise(null).raiseAll(-1, "ops")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1");
        assertThatThrownBy(() -> raise(null).raiseAll(9, " ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("actor");
        assertThat(store.maxSeen("a")).hasValue(5);
    }

    @Test
    void theInventoryListsInOrderAndKnowsTheHighest() throws Throwable {
        assertThat(store.highestMaxSeen()).isEmpty();
        write(new FencingToken("c", 3, "h"));
        write(new FencingToken("a", 9, "h"));
        write(new FencingToken("b", 4, "h"));
        assertThat(store.resources(null, 10)).containsExactly("a", "b", "c");
        assertThat(store.resources("a", 1)).containsExactly("b");
        assertThat(store.highestMaxSeen()).hasValue(9);
        assertThatThrownBy(() -> store.resources(null, 0)).isInstanceOf(IllegalArgumentException.class);
    }
    /**
     * After a restore mid-migration, a raise answered by an issuer below the stored base (the old one, or the new one
     * without its offset) would leave the new issuer's zombies above the floors: refused before anything changes,
     * unless the value given clears the base; the offset issuer raises as before.
     */
    @Test
    void aRaiseBelowAStoredMigrationBaseIsRefusedBeforeAnythingChanges() throws Throwable {
        java.util.Map<String, Long> bases = java.util.Map.of("zk-2026", 1000L);
        dev.fencing.issuer.OffsetTokenIssuer migrated = dev.fencing.issuer.OffsetTokenIssuer.of(
                new InMemoryTokenIssuer(), 1000);
        write(new FencingToken("audit", 7, "old-issuer")); // a resource the new issuer has not touched
        FencingToken zombie;
        try (Lease first = migrated.acquire("ledger", WAIT)) {
            zombie = first.token(); // 1001
            write(zombie);
        }
        try (Lease second = migrated.acquire("ledger", WAIT)) {
            write(second.token()); // 1002
        }
        restore("ledger", 5);

        assertThatThrownBy(() -> raise(issuer).withStoredBases(() -> bases).raiseAll(0, "ops"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("floor raise asked by ops refused, nothing changed")
                .hasMessageContaining("is below the base 1000 that the issuer migration 'zk-2026' stored");
        assertThatThrownBy(() -> raise(null).withStoredBases(() -> bases).raiseAll(999, "ops"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("(at least 999) 999 is below the base 1000")
                .hasMessageContaining("Give a value at or above 1000")
                .hasMessageNotContaining("--offset"); // without an issuer, an offset has nothing to shift
        assertThat(store.maxSeen("ledger")).hasValue(5);
        assertThat(store.maxSeen("audit")).hasValue(7);
        assertThat(raisedCount()).isZero();

        FloorRaiseResult result = raise((IssuedTokens) migrated).withStoredBases(() -> bases).raiseAll(0, "ops");

        assertThat(result.raised()).isEqualTo(2);
        assertThat(store.maxSeen("ledger")).hasValue(1002);
        assertThat(store.maxSeen("audit")).hasValue(1000);
        assertThatThrownBy(() -> write(zombie)).isInstanceOf(TokenRejectedException.class);
    }
    /**
     * Mid-migration, the old issuer's application raising with a value above the stored base (its startup warning
     * told the operator to): the floors rise, but its counters stay below the base, so its next token is refused
     * rather than handed out among the new issuer's (a trial: the old instance wrote 100005 over the new holders).
     */
    @Test
    void theOldIssuersCountersAreNotRaisedIntoAStoredMigrationsRange() throws Throwable {
        java.util.Map<String, Long> bases = java.util.Map.of("zk-2026", 1000L);
        try (Lease old = issuer.acquire("ledger", WAIT)) {
            write(old.token()); // the old issuer's token 1
        }
        write(new FencingToken("ledger", 1002, "new-issuer"));

        FloorRaiseResult result = raise(issuer).withStoredBases(() -> bases).raiseAll(1002, "ops");

        assertThat(result.examined()).isEqualTo(1);
        assertThat(store.maxSeen("ledger")).hasValue(1002);
        try (Lease next = issuer.acquire("ledger", WAIT)) {
            assertThat(next.token().value()).as("the old issuer's counter was left below the base").isEqualTo(2);
            assertThatThrownBy(() -> write(next.token())).isInstanceOf(TokenRejectedException.class);
        }
    }
}

package dev.fencing.issuer;

import dev.fencing.FencingConfigurationException;
import dev.fencing.LogCapture;
import dev.fencing.recovery.IssuedResources;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.retention.CounterFloors;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The offset decorator: B's token plus the base, the lock and its release B's, overflow refused with the lock given
 * back, {@link IssuedTokens} and {@link IssuerFloors} shifted by the base, and the stored base checked at startup.
 */
class OffsetTokenIssuerTest {

    private static final Duration WAIT = Duration.ofSeconds(1);

    @Test
    void issuesTheDecoratedTokenPlusTheBaseAndKeepsItsHolder() {
        InMemoryTokenIssuer b = new InMemoryTokenIssuer(Duration.ofSeconds(30), 6);
        OffsetTokenIssuer offset = OffsetTokenIssuer.of(b, 1_000);
        try (Lease lease = offset.acquire("ledger", WAIT)) {
            assertThat(lease.token().value()).isEqualTo(1_007);
            assertThat(lease.token().resource()).isEqualTo("ledger");
            assertThat(b.highestIssued("ledger")).isEqualTo(7);
            assertThat(lease.isHeld()).isTrue();
            // the lock is B's: B itself cannot take it now
            assertThatThrownBy(() -> b.acquire("ledger", Duration.ZERO)).isInstanceOf(LockAcquisitionException.class);
        }
        try (Lease next = offset.acquire("ledger", WAIT)) {
            assertThat(next.token().value()).isEqualTo(1_008);
        }
    }

    @Test
    void releaseAndLossAreTheDecoratedLeases() {
        InMemoryTokenIssuer b = new InMemoryTokenIssuer();
        OffsetTokenIssuer offset = OffsetTokenIssuer.of(b, 50);
        Lease lease = offset.acquire("r", WAIT);
        lease.close();
        assertThat(lease.isReleased()).isTrue();
        assertThat(lease.isHeld()).isFalse();
        assertThat(((IssuedTokens) offset).isHeld("r")).isFalse();
        try (Lease again = b.acquire("r", Duration.ZERO)) {
            assertThat(again.isHeld()).as("released through the decorator, free for B").isTrue();
        }
        Lease held = offset.acquire("r", WAIT);
        assertThat(held.isLost()).isFalse();
        held.close();
        held.close(); // idempotent as B's lease is
        assertThat(held.isLost()).isFalse();
    }

    @Test
    void theLostLockLineNamesTheTokenTheHolderPresentsBesideTheLockServicesOwn() {
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();
        InMemoryTokenIssuer b = new InMemoryTokenIssuer(Duration.ofSeconds(1), 0, now::get);
        OffsetTokenIssuer offset = OffsetTokenIssuer.of(b, 1_000);
        try (LogCapture log = LogCapture.of(AbstractTokenIssuer.class)) {
            Lease zombie = offset.acquire("ledger", WAIT);
            now.addAndGet(Duration.ofSeconds(2).toNanos());
            try (Lease next = offset.acquire("ledger", WAIT)) { // takes the expired lock over
                assertThat(next.token().value()).isEqualTo(1_002);
            }
            assertThat(zombie.isLost()).isTrue();
            Lease raw = b.acquire("ledger", WAIT);
            now.addAndGet(Duration.ofSeconds(2).toNanos());
            b.acquire("ledger", WAIT).close();
            assertThat(raw.isLost()).isTrue();
            assertThat(log.records()).extracting(LogRecord::getMessage).hasSize(2)
                    .first().asString().contains("Lost the lock on 'ledger' (token 1001, 1 as the lock service "
                            + "counts it)");
            assertThat(log.records().get(1).getMessage()).contains("Lost the lock on 'ledger' (token 3)");
        }
    }

    @Test
    void overflowIsAClearErrorAndLeavesNoLockHeld() {
        InMemoryTokenIssuer b = new InMemoryTokenIssuer(Duration.ofSeconds(30), Long.MAX_VALUE - 10);
        OffsetTokenIssuer offset = OffsetTokenIssuer.of(b, 100);
        assertThatThrownBy(() -> offset.acquire("accounts:9", WAIT))
                .isInstanceOf(LockAcquisitionException.class)
                .hasMessageContaining("'accounts:9'").hasMessageContaining("base 100")
                .hasMessageContaining("overflows").hasMessageContaining("released");
        assertThat(b.isHeld("accounts:9")).isFalse();
        try (Lease free = b.acquire("accounts:9", Duration.ZERO)) {
            assertThat(free.token().value()).isEqualTo(Long.MAX_VALUE - 8);
        }
    }

    @Test
    void badArgumentsAreRefusedBeforeAnyLock() {
        InMemoryTokenIssuer b = new InMemoryTokenIssuer();
        assertThatThrownBy(() -> OffsetTokenIssuer.of(b, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("positive").hasMessageContaining("0");
        assertThatThrownBy(() -> OffsetTokenIssuer.of(b, -5)).hasMessageContaining("-5");
        OffsetTokenIssuer offset = OffsetTokenIssuer.of(b, 5);
        assertThatThrownBy(() -> OffsetTokenIssuer.of(offset, 5)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("already offset");
        assertThatThrownBy(() -> offset.acquire(" ", WAIT)).isInstanceOf(IllegalArgumentException.class);
        assertThat(b.highestIssued(" ")).isZero();
    }

    @Test
    void issuedTokensAreShiftedByTheBaseWhenTheDelegateTracksThem() {
        InMemoryTokenIssuer b = new InMemoryTokenIssuer();
        OffsetTokenIssuer offset = OffsetTokenIssuer.of(b, 900);
        assertThat(offset).isInstanceOf(IssuedTokens.class).isInstanceOf(IssuerFloors.class);
        IssuedTokens issued = (IssuedTokens) offset;
        assertThat(issued.highestIssued("never")).isEqualTo(900);
        try (Lease lease = offset.acquire("x", WAIT)) {
            assertThat(issued.highestIssued("x")).isEqualTo(lease.token().value()).isEqualTo(901);
            assertThat(issued.isHeld("x")).isTrue();
        }
        assertThat(issued.isHeld("x")).isFalse();

        TokenIssuer plain = (resource, timeout) -> b.acquire(resource, timeout);
        assertThat(OffsetTokenIssuer.of(plain, 1)).isNotInstanceOf(IssuedTokens.class);
    }

    @Test
    void familyFloorsAreForwardedLessTheBase() {
        List<String> raised = new ArrayList<>();
        class Floored implements TokenIssuer, IssuerFloors {
            final InMemoryTokenIssuer inner = new InMemoryTokenIssuer();

            @Override
            public Lease acquire(String resource, Duration timeout) {
                return inner.acquire(resource, timeout);
            }

            @Override
            public void raiseFamilyFloor(String family, long floor) {
                raised.add(family + "=" + floor);
            }
        }
        OffsetTokenIssuer offset = OffsetTokenIssuer.of(new Floored(), 1_000);
        assertThat(offset).isInstanceOf(IssuerFloors.class).isNotInstanceOf(IssuedTokens.class);
        IssuerFloors floors = (IssuerFloors) offset;
        floors.raiseFamilyFloor("accounts", 1_250);
        floors.raiseFamilyFloor("orders", 400); // below the base: B's floor 0, every B token is above it already
        assertThat(raised).containsExactly("accounts=250", "orders=0");
        assertThatThrownBy(() -> floors.raiseFamilyFloor("accounts", -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("accounts").hasMessageContaining("-1");
        assertThatThrownBy(() -> floors.raiseFamilyFloor(" ", 5)).isInstanceOf(IllegalArgumentException.class);
        assertThat(raised).hasSize(2);
    }

    /**
     * An issuer with counter floors but no family floors (Redisson's) kept only {@code IssuedTokens} under an offset,
     * so the floor raise after a Redis counter reset raised max_seen and not the counters, and every next token stayed
     * refused (a red-team review); a JDBC lease's resource listing, which the floor raise after a restore walks, was
     * dropped the same way.
     */
    @Test
    void counterFloorsAndTheResourceListingStayOfferedUnderAnOffset() {
        List<String> raised = new ArrayList<>();
        class Counters extends Delegating implements IssuedTokens, CounterFloors {
            @Override
            public void raiseResourceFloor(String resource, long floor) {
                raised.add(resource + "=" + floor);
            }
        }
        OffsetTokenIssuer counters = OffsetTokenIssuer.of(new Counters(), 1_000);
        assertThat(counters).isInstanceOf(IssuedTokens.class).isInstanceOf(CounterFloors.class)
                .isNotInstanceOf(IssuerFloors.class);
        ((CounterFloors) counters).raiseResourceFloor("accounts:1", 1_040);
        assertThat(raised).containsExactly("accounts:1=40");

        class Listed extends Delegating implements IssuedTokens, IssuerFloors, IssuedResources {
            @Override
            public void raiseFamilyFloor(String family, long floor) {
            }

            @Override
            public List<String> issuedResources(String after, int limit) {
                return List.of("accounts:1", "accounts:2").subList(after == null ? 0 : 1, Math.min(2, limit));
            }
        }
        OffsetTokenIssuer listed = OffsetTokenIssuer.of(new Listed(), 1_000);
        assertThat(listed).isInstanceOf(IssuerFloors.class).isInstanceOf(IssuedResources.class);
        assertThat(((IssuedResources) listed).issuedResources(null, 10)).containsExactly("accounts:1", "accounts:2");

        // a combination no offset issuer offers is refused, not silently narrowed
        class ListedOnly extends Delegating implements IssuedResources {
            @Override
            public List<String> issuedResources(String after, int limit) {
                return List.of();
            }
        }
        assertThatThrownBy(() -> OffsetTokenIssuer.of(new ListedOnly(), 1_000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("IssuedResources");
    }

    /** A bound on a one-sequence issuer's tokens (the store's max_seen, read at startup) is forwarded shifted. */
    @Test
    void aRequiredBoundIsForwardedLessTheBase() {
        List<String> required = new ArrayList<>();
        class Sequence extends Delegating implements IssuedTokens {
            @Override
            public void requireAbove(long token, String source) {
                required.add(token + " (" + source + ")");
            }
        }
        IssuedTokens offset = (IssuedTokens) OffsetTokenIssuer.of(new Sequence(), 1_000);
        offset.requireAbove(1_250, "max_seen");
        offset.requireAbove(400, "an old token"); // below the base: every shifted token is above it already
        assertThat(required).containsExactly("250 (max_seen, less the offset base 1000)");
    }

    /** A test issuer that locks in memory and tracks what it issued, for the sides a test adds. */
    private static class Delegating implements TokenIssuer {
        final InMemoryTokenIssuer inner = new InMemoryTokenIssuer();

        @Override
        public Lease acquire(String resource, Duration timeout) {
            return inner.acquire(resource, timeout);
        }

        public long highestIssued(String resource) {
            return inner.highestIssued(resource);
        }

        public boolean isHeld(String resource) {
            return inner.isHeld(resource);
        }
    }

    @Test
    void resourceFloorsAreForwardedLessTheBaseSoTheNextShiftedTokenClearsThem() {
        InMemoryTokenIssuer inner = new InMemoryTokenIssuer();
        IssuerFloors floors = (IssuerFloors) OffsetTokenIssuer.of(inner, 1_000);
        floors.raiseResourceFloor("accounts:1", 1_040);
        floors.raiseResourceFloor("accounts:2", 400); // below the base: every shifted token is above it already
        try (Lease lease = ((TokenIssuer) floors).acquire("accounts:1", Duration.ofSeconds(1))) {
            assertThat(lease.token().value()).isEqualTo(1_041);
        }
        try (Lease lease = ((TokenIssuer) floors).acquire("accounts:2", Duration.ofSeconds(1))) {
            assertThat(lease.token().value()).isEqualTo(1_001);
        }
        assertThatThrownBy(() -> floors.raiseResourceFloor("accounts:1", -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("accounts:1");
    }

    @Test
    void theBaseIsStoredOnceAndADifferentOneRefusesToStart() {
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        InMemoryTokenIssuer b = new InMemoryTokenIssuer();
        OffsetTokenIssuer first = OffsetTokenIssuer.establish(b, bases, "zk-2026", 10_000, null);
        assertThat(first.base()).isEqualTo(10_000);
        assertThat(bases.stored("zk-2026")).hasValue(10_000);
        assertThat(OffsetTokenIssuer.establish(b, bases, "zk-2026", 10_000, null).base()).isEqualTo(10_000);
        assertThatThrownBy(() -> OffsetTokenIssuer.establish(b, bases, "zk-2026", 1_000, null))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("zk-2026").hasMessageContaining("1000").hasMessageContaining("10000");
        assertThat(bases.stored("zk-2026")).as("never lowered").hasValue(10_000);
        assertThat(bases.establish("zk-2026", 5)).isEqualTo(10_000);
    }

    @Test
    void storingANewMigrationWhileOthersAreStoredIsAWarningNamingThem() {
        try (LogCapture log = LogCapture.of(OffsetTokenIssuer.class)) {
            InMemoryIssuerBase bases = new InMemoryIssuerBase();
            InMemoryTokenIssuer b = new InMemoryTokenIssuer();
            OffsetTokenIssuer.establish(b, bases, "zk-2026", 1_000, null);
            OffsetTokenIssuer.establish(b, bases, "zk-2026", 1_000, null); // a restart: stores nothing
            OffsetTokenIssuer.establish(b, bases, "default", 2_000, null);
            assertThat(log.records()).extracting(LogRecord::getLevel)
                    .containsExactly(Level.INFO, Level.WARNING);
            assertThat(log.records().get(1).getMessage()).startsWith("Issuer offset 'default' stored with base "
                    + "2000, while offsets of other migrations are stored: 'zk-2026'=1000.")
                    .contains("configure every instance with the same migration name and base");
        }
    }

    @Test
    void aFirstBaseAtOrBelowTheStoresHighestMaxSeenIsRefusedAndNotStored() throws Throwable {
        InMemoryFenceStore store = new InMemoryFenceStore();
        store.fence("a", new FencingToken("a", 9, "h"), () -> null);
        store.fence("b", new FencingToken("b", 4, "h"), () -> null);
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        InMemoryTokenIssuer b = new InMemoryTokenIssuer();
        assertThatThrownBy(() -> OffsetTokenIssuer.establish(b, bases, "m", 9, store))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("base 9").hasMessageContaining("highest max_seen 9");
        assertThat(bases.stored("m")).isEmpty();
        OffsetTokenIssuer offset = OffsetTokenIssuer.establish(b, bases, "m", 10, store);
        try (Lease lease = offset.acquire("a", WAIT)) {
            store.fence("a", lease.token(), () -> null); // B's first token is above A's last: accepted
            assertThat(store.maxSeen("a")).hasValue(11);
        }
        // a restart after the migration: max_seen is above the base now, and that is fine
        assertThat(OffsetTokenIssuer.establish(b, bases, "m", 10, store).base()).isEqualTo(10);
    }
}

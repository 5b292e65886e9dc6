package dev.fencing.recovery;

import dev.fencing.LogCapture;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The way back on the in-memory store and issuer: lock-out, reset, no zombie window, and every refusal. */
class MaxSeenResetTest {

    private static final String R = "accounts:3";

    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MaxSeenReset reset = new MaxSeenReset(store, issuer, new AdminMetrics(registry));

    private String write(FencingToken token) throws Throwable {
        return store.fence(token.resource(), token, () -> "written " + token.value());
    }

    private double count(String outcome) {
        return registry.get(AdminMetrics.RESETS).tag("outcome", outcome).counter().count();
    }

    /** Two holders wrote with tokens 1 and 2, then a forged token locked the resource out. */
    private FencingToken lockedOut() throws Throwable {
        FencingToken zombie;
        try (Lease first = issuer.acquire(R, Duration.ofSeconds(1))) {
            zombie = first.token();
            write(zombie);
        }
        try (Lease second = issuer.acquire(R, Duration.ofSeconds(1))) {
            write(second.token());
        }
        write(new FencingToken(R, Long.MAX_VALUE, "evil"));
        try (Lease third = issuer.acquire(R, Duration.ofSeconds(1))) {
            FencingToken real = third.token();
            assertThatThrownBy(() -> write(real)).isInstanceOf(StaleTokenException.class);
        }
        return zombie;
    }

    @Test
    void resetToTheHighestIssuedLetsTheNextHolderInAndKeepsEveryIssuedTokenOut() throws Throwable {
        FencingToken zombie = lockedOut();
        List<LogRecord> logged = capture();

        ResetResult result = reset.toHighestIssued(R, "ops:alice", false);

        assertThat(result.previous()).isEqualTo(Long.MAX_VALUE);
        assertThat(result.current()).isEqualTo(3).isEqualTo(issuer.highestIssued(R)).isEqualTo(result.highestIssued());
        assertThat(store.maxSeen(R)).hasValue(3);
        assertThat(count("lowered")).isEqualTo(1);
        assertThat(logged).anySatisfy(r -> {
            assertThat(r.getLevel()).isEqualTo(Level.WARNING);
            assertThat(r.getMessage()).contains("'" + R + "'", String.valueOf(Long.MAX_VALUE), " to 3", "ops:alice");
        });
        // the zombie (token 1) and the holder whose lease ended (token 3) stay out; the next holder is in
        assertThatThrownBy(() -> write(zombie)).isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> write(new FencingToken(R, 3, "mem-any-3")))
                .isInstanceOf(DuplicateTokenException.class);
        try (Lease next = issuer.acquire(R, Duration.ofSeconds(1))) {
            assertThat(write(next.token())).isEqualTo("written 4");
        }
    }

    @Test
    void refusedWhileALeaseIsHeldUnlessForced() throws Throwable {
        lockedOut();
        try (Lease held = issuer.acquire(R, Duration.ofSeconds(1))) {
            assertThatThrownBy(() -> reset.toHighestIssued(R, "ops", false))
                    .isInstanceOf(ResetRefusedException.class).hasMessageContaining(R).hasMessageContaining("held");
            assertThat(store.maxSeen(R)).hasValue(Long.MAX_VALUE);
            assertThat(count("refused")).isEqualTo(1);

            List<LogRecord> logged = capture();
            ResetResult forced = reset.toHighestIssued(R, "ops", true);
            assertThat(forced.current()).isEqualTo(held.token().value());
            // the log tells a forced reset from a plain one: its holder was locked out
            assertThat(logged).anySatisfy(r -> assertThat(r.getMessage()).contains(" lowered from ", "by ops",
                    "FORCED while a lease on it was held"));
            // forced: the current holder's own token is refused too (equal, no holder); never a smaller one accepted
            assertThatThrownBy(() -> write(held.token())).isInstanceOf(DuplicateTokenException.class);
        }
    }

    @Test
    void explicitValueNeedsTheOverrideAndIsNeverBelowTheHighestIssued() throws Throwable {
        lockedOut();
        assertThatThrownBy(() -> reset.toValue(R, 100, "ops", false, false))
                .isInstanceOf(ResetRefusedException.class).hasMessageContaining("override");
        List<LogRecord> logged = capture();
        assertThatThrownBy(() -> reset.toValue(R, 2, "ops", true, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("below the issuer's highest issued token 3");
        assertThat(store.maxSeen(R)).hasValue(Long.MAX_VALUE);
        // an attempt to reopen a zombie window leaves a trace
        assertThat(logged).anySatisfy(r -> {
            assertThat(r.getLevel()).isEqualTo(Level.WARNING);
            assertThat(r.getMessage()).contains("Reset refused as bad input", "below the issuer's highest", "ops");
        });

        assertThat(reset.toValue(R, 100, "ops", true, false).current()).isEqualTo(100);
        assertThat(store.maxSeen(R)).hasValue(100);
    }

    @Test
    void badInputIsRefusedNamingWhatAndNothingChanges() throws Throwable {
        write(new FencingToken(R, 5, "a"));
        assertThatThrownBy(() -> reset.toHighestIssued("accounts:unknown", "ops", false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("accounts:unknown")
                .hasMessageContaining("no max_seen");
        assertThatThrownBy(() -> reset.toValue(R, -1, "ops", true, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
        assertThatThrownBy(() -> store.lowerMaxSeen(R, 6))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("above its current max_seen 5");
        assertThatThrownBy(() -> reset.toHighestIssued(R, " ", false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("actor");
        assertThatThrownBy(() -> reset.toValue(R, 7, "ops", true, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not above 7");
        // a family's floor row is not a resource
        assertThatThrownBy(() -> reset.toValue("accounts\u001f", 0, "ops", true, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("control character at index 8");
        assertThat(store.maxSeen(R)).hasValue(5);
        assertThat(count("lowered")).isZero();
    }

    /**
     * A resource the issuer never locked is forgotten on the operator's word only (the explicit value 0): an issuer
     * that answers 0 may be the wrong one, and a trial's reset through an instance on another, empty lease table
     * forgot a resource real holders had written, and token 1 wrote after 2.
     */
    @Test
    void aResourceTheIssuerNeverLockedIsForgottenOnlyWithTheExplicitZeroAndItsFirstRealTokenAccepted()
            throws Throwable {
        write(new FencingToken(R, Long.MAX_VALUE, "evil"));
        List<LogRecord> logged = capture();
        assertThatThrownBy(() -> reset.toHighestIssued(R, "ops", false)).isInstanceOf(ResetRefusedException.class)
                .hasMessageContaining("the issuer has issued no token for it")
                .hasMessageContaining("explicit value 0 and the override");
        assertThat(store.maxSeen(R)).as("nothing changed").hasValue(Long.MAX_VALUE);
        assertThat(reset.toValue(R, 0, "ops", true, false).current()).isZero();
        assertThat(store.maxSeen(R)).isEmpty();
        assertThat(logged).anySatisfy(r -> assertThat(r.getMessage()).contains("'" + R + "' forgotten")
                .contains("next token is a first one").contains("by ops"));
        try (Lease first = issuer.acquire(R, Duration.ofSeconds(1))) {
            assertThat(write(first.token())).isEqualTo("written 1");
        }
    }

    /** A store that refuses the change for now (a lock not granted in time) refuses the reset: counted and logged. */
    @Test
    void aStoreThatCannotForgetInTimeRefusesTheReset() throws Throwable {
        FenceAdmin busy = new FenceAdmin() {
            @Override
            public OptionalLong maxSeen(String resource) {
                return store.maxSeen(resource);
            }

            @Override
            public void raiseFloor(String resource, long value) {
                store.raiseFloor(resource, value);
            }

            @Override
            public long lowerMaxSeen(String resource, long floor) {
                throw new ResetRefusedException(resource, "lowerMaxSeen('" + resource + "', 0): busy; nothing changed");
            }

            @Override
            public long lowerMaxSeen(String resource, long floor, long expected) {
                return lowerMaxSeen(resource, floor);
            }
        };
        write(new FencingToken(R, Long.MAX_VALUE, "evil"));
        List<LogRecord> logged = capture();
        assertThatThrownBy(() -> new MaxSeenReset(busy, issuer, new AdminMetrics(registry)).toValue(R, 0, "ops",
                true, false)).isInstanceOf(ResetRefusedException.class).hasMessageContaining("busy");
        assertThat(count("refused")).isEqualTo(1);
        assertThat(logged).anySatisfy(r -> assertThat(r.getMessage()).contains("busy").contains("asked by ops"));
        assertThat(store.maxSeen(R)).hasValue(Long.MAX_VALUE);
    }

    @Test
    void withoutAnIssuerOnlyAnExplicitOverriddenValueIsAccepted() throws Throwable {
        MaxSeenReset blind = new MaxSeenReset(store, null, new AdminMetrics(null));
        write(new FencingToken(R, Long.MAX_VALUE, "evil"));
        assertThatThrownBy(() -> blind.toHighestIssued(R, "ops", false))
                .isInstanceOf(ResetRefusedException.class).hasMessageContaining("no issuer");
        assertThat(blind.toValue(R, 40, "ops", true, false).highestIssued()).isEqualTo(-1);
        assertThat(store.maxSeen(R)).hasValue(40);
    }

    /** What MaxSeenReset logs in this test; the handler comes off after it ({@link #stopCapturing()}). */
    private final LogCapture log = LogCapture.of(MaxSeenReset.class);

    @AfterEach
    void stopCapturing() {
        log.close();
    }

    /** What MaxSeenReset logs from here to the end of this test. */
    private List<LogRecord> capture() {
        log.records().clear();
        return log.records();
    }
    /**
     * Mid-migration (an offset issuer stored base 1000 and its holders wrote above it), a reset answered by the old
     * issuer would lower max_seen to the old issuer's highest token and let the new issuer's zombies write again: it
     * is refused, counted, and nothing changes. The new issuer (its tokens shifted by the base) resets as before.
     */
    @Test
    void aResetBelowAStoredMigrationBaseIsRefusedAndTheOffsetIssuerResets() throws Throwable {
        java.util.Map<String, Long> bases = java.util.Map.of("zk-2026", 1000L);
        dev.fencing.issuer.OffsetTokenIssuer migrated = dev.fencing.issuer.OffsetTokenIssuer.of(
                new InMemoryTokenIssuer(), 1000);
        FencingToken zombie;
        try (Lease first = migrated.acquire(R, Duration.ofSeconds(1))) {
            zombie = first.token();
            write(zombie);
        }
        try (Lease second = migrated.acquire(R, Duration.ofSeconds(1))) {
            write(second.token());
        }
        write(new FencingToken(R, Long.MAX_VALUE, "evil"));
        try (Lease old = issuer.acquire(R, Duration.ofSeconds(1))) { // the old issuer still counts: 1
            assertThat(old.token().value()).isEqualTo(1);
        }
        MaxSeenReset onTheOldIssuer = reset.withStoredBases(() -> bases);

        assertThatThrownBy(() -> onTheOldIssuer.toHighestIssued(R, "ops:alice", false))
                .isInstanceOf(ResetRefusedException.class)
                .hasMessageContaining("Reset of resource '" + R + "' refused: the new max_seen (the issuer's highest "
                        + "issued token) 1 is below the base 1000 that the issuer migration 'zk-2026' stored")
                .hasMessageContaining("--offset zk-2026");
        assertThatThrownBy(() -> onTheOldIssuer.toValue(R, 999, "ops:alice", true, false))
                .isInstanceOf(ResetRefusedException.class).hasMessageContaining("999 is below the base 1000");
        assertThatThrownBy(() -> new MaxSeenReset(store, null, new AdminMetrics(registry))
                .withStoredBases(() -> bases).toValue(R, 999, "ops:alice", true, false))
                .isInstanceOf(ResetRefusedException.class).hasMessageContaining("999 is below the base 1000")
                .hasMessageContaining("Give a value at or above 1000")
                .hasMessageNotContaining("--offset"); // without an issuer, an offset has nothing to shift
        assertThat(store.maxSeen(R)).hasValue(Long.MAX_VALUE);
        assertThat(count("refused")).isEqualTo(3);

        ResetResult result = new MaxSeenReset(store, (IssuedTokens) migrated, new AdminMetrics(registry))
                .withStoredBases(() -> bases).toHighestIssued(R, "ops:alice", false);

        assertThat(result.current()).isEqualTo(1002);
        assertThatThrownBy(() -> write(zombie)).isInstanceOf(StaleTokenException.class);
    }
}

package dev.fencing.recovery;

import dev.fencing.LogCapture;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.OptionalLong;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The floor raise's administrative edges: a named resource or family no token can name is bad input refused before
 * anything changes, and a run that fails half-way says (at WARNING, with who asked) what it raised before failing.
 */
@Timeout(30)
class FloorRaiseAdminInputTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final LogCapture log = LogCapture.of(FloorRaise.class);

    @AfterEach
    void stopCapturing() {
        log.close();
    }

    private void write(String resource, long value) throws Throwable {
        store.fence(resource, new FencingToken(resource, value, "h"), () -> null);
    }

    /**
     * A named resource with a control character (a pasted line break, a NUL) names no resource a token can reach:
     * before, every listed resource was raised first and the bad name got a row of its own (or, on PostgreSQL, failed
     * the run with a database error after the rest had changed). Refused as bad input, nothing changed.
     */
    @Test
    void aNamedResourceOrFamilyWithAControlCharacterIsRefusedBeforeAnythingChanges() throws Throwable {
        write("a", 5);
        FloorRaise raise = new FloorRaise(store, store, null, new AdminMetrics(registry));
        assertThatThrownBy(() -> raise.raiseAll(9, "ops", List.of("ledger\n"), List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control character").hasMessageContaining("index 6");
        assertThatThrownBy(() -> raise.raiseAll(9, "ops", List.of(), List.of("acc\u0000ounts")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control character").hasMessageContaining("index 3");
        assertThat(store.maxSeen("a")).hasValue(5);
        assertThat(store.resources(null, 10)).containsExactly("a");
    }

    /**
     * A store failure on one resource half-way through the raise (a row held past the lock timeout, a lost
     * connection): the resources raised before stay raised (a raise never lowers), and the run says so at WARNING,
     * with who asked, how many were raised and where it stopped; before, only the raw exception came back and the
     * run left no line naming its actor.
     */
    @Test
    void aRaiseThatFailsHalfWayLogsWhoAskedAndWhatItRaised() throws Throwable {
        for (String resource : List.of("a", "b", "c", "d")) {
            write(resource, 1);
        }
        FenceAdmin failingOnC = new FenceAdmin() {
            @Override
            public OptionalLong maxSeen(String resource) {
                return store.maxSeen(resource);
            }

            @Override
            public void raiseFloor(String resource, long value) {
                if (resource.equals("c")) {
                    throw new IllegalStateException("row of 'c' held past the lock timeout");
                }
                store.raiseFloor(resource, value);
            }

            @Override
            public long lowerMaxSeen(String resource, long floor) {
                return store.lowerMaxSeen(resource, floor);
            }
        };
        FloorRaise raise = new FloorRaise(failingOnC, store, null, new AdminMetrics(registry));
        assertThatThrownBy(() -> raise.raiseAll(9, "alice (INC-77)"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("'c'");
        assertThat(store.maxSeen("a")).hasValue(9);
        assertThat(store.maxSeen("b")).hasValue(9);
        assertThat(store.maxSeen("d")).hasValue(1);
        List<LogRecord> warnings = log.records().stream()
                .filter(r -> r.getLevel().intValue() >= Level.WARNING.intValue()).toList();
        assertThat(warnings).anySatisfy(r -> assertThat(r.getMessage())
                .contains("alice (INC-77)").contains("failed").contains("2 of 3"));
    }

    /**
     * Every change of the raise is in the log with who made it, what, the old and the new value: the line of each
     * raised resource and family floor names the actor (before, only the run's summary did, so a resource's line
     * could not be told from another run's).
     */
    @Test
    void eachRaisedResourceAndFloorIsLoggedWithWhoAskedOldAndNew() throws Throwable {
        write("accounts:1", 3);
        FloorRaise raise = new FloorRaise(store, store, null, new AdminMetrics(registry));
        raise.raiseAll(9, "alice (INC-77)");
        List<String> lines = log.records().stream().map(LogRecord::getMessage).toList();
        assertThat(lines).anySatisfy(line -> assertThat(line)
                .isEqualTo("max_seen of resource 'accounts:1' raised from 3 to 9 by alice (INC-77)"));
        assertThat(lines).anySatisfy(line -> assertThat(line)
                .isEqualTo("floor of family 'accounts' raised from 0 to 9 by alice (INC-77)"));
    }

    /** Without an issuer, the run's summary says what it raised to (the value given), not "the issuer's tokens". */
    @Test
    void theSummaryOfARaiseWithoutAnIssuerNamesTheValueGivenOnly() throws Throwable {
        write("a", 3);
        new FloorRaise(store, store, null, new AdminMetrics(registry)).raiseAll(9, "alice");
        assertThat(log.records().stream().map(LogRecord::getMessage).toList()).anySatisfy(line -> assertThat(line)
                .isEqualTo("Floor raise after restore by alice: 1 of 1 resources raised (to at least 9)"));
    }

    /**
     * A floor at the top of the token range leaves no token above it: every write of every resource refused for
     * good, and an issuer with counters per resource raised there can issue none (a typo, or a value pasted from a
     * forged token). Refused as bad input, nothing changed, issuer counters included.
     */
    @Test
    void aFloorAtTheTopOfTheTokenRangeIsRefusedBeforeAnythingChanges() throws Throwable {
        write("a", 3);
        dev.fencing.issuer.InMemoryTokenIssuer issuer = new dev.fencing.issuer.InMemoryTokenIssuer();
        FloorRaise raise = new FloorRaise(store, store, issuer, new AdminMetrics(registry));
        assertThatThrownBy(() -> raise.raiseAll(Long.MAX_VALUE, "ops"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("9223372036854775807")
                .hasMessageContaining("nothing changed");
        assertThat(store.maxSeen("a")).hasValue(3);
        try (dev.fencing.issuer.Lease lease = issuer.acquire("a", java.time.Duration.ofSeconds(1))) {
            assertThat(lease.token().value()).isLessThan(Long.MAX_VALUE);
        }
    }
}

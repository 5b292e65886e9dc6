package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.retention.CompactionResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Retention of the JDBC lease table on a real database: family floors ({@link JdbcTokenIssuer#raiseFamilyFloor}),
 * compaction of idle rows into them ({@link JdbcTokenIssuer#compact}), and the race of the two with acquires.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcLeaseRetentionContract {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private String table;
    private JdbcTokenIssuer issuer;

    abstract Database database();

    @BeforeAll
    void start() {
        pool = database().newPool(12);
        jdbc = new JdbcTemplate(pool);
        table = Database.uniqueTable("lease");
        issuer = JdbcTokenIssuer.builder(pool).table(table).createTableIfMissing(true).build();
        issuer.verify();
    }

    @AfterAll
    void stop() {
        jdbc.execute("DROP TABLE IF EXISTS " + table);
        pool.close();
    }

    private static String family() {
        return "fam" + UUID.randomUUID().toString().substring(0, 8);
    }

    private long take(String resource) {
        try (Lease lease = issuer.acquire(resource, WAIT)) {
            return lease.token().value();
        }
    }

    private int rows(String family) {
        return jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE resource LIKE ?", Integer.class,
                family + ":%");
    }

    @Test
    void aNewResourceStartsAboveItsFamilysFloorAndOthersAreUntouched() {
        String family = family();
        issuer.raiseFamilyFloor(family, 100);

        assertThat(issuer.highestIssued(family + ":1")).isEqualTo(100);
        assertThat(take(family + ":1")).isEqualTo(101);
        assertThat(take(family + ":1")).isEqualTo(102);
        assertThat(take(family + ":2")).isEqualTo(101);
        assertThat(take(family + "x:1")).isEqualTo(1); // another family
        assertThat(take(family + "-unkeyed")).isEqualTo(1); // no family
        assertThat(issuer.familyFloor(family)).hasValue(100);
        assertThat(issuer.familyFloor(family + "x")).isEmpty();
    }

    @Test
    void anExistingRowBelowARaisedFloorIssuesAboveTheFloor() {
        String family = family();
        assertThat(take(family + ":1")).isEqualTo(1);
        issuer.raiseFamilyFloor(family, 50);
        issuer.raiseFamilyFloor(family, 20); // never lowers
        issuer.raiseFamilyFloor(family, 50); // idempotent

        assertThat(issuer.familyFloor(family)).hasValue(50);
        assertThat(take(family + ":1")).isEqualTo(51);
        assertThat(issuer.highestIssued(family + ":1")).isEqualTo(51);
    }

    /**
     * An acquisition of a folded resource inserts its row (token 0) in a transaction of its own before it takes it: a
     * reader meanwhile, or after an acquisition that stopped between the two, sees that row. The highest token issued
     * for the resource is still the family's floor: a reset to a lower value would let a token issued before the fold
     * through.
     */
    @Test
    void aRowInsertedButNotYetTakenReportsTheFamilysFloorAsHighestIssued() {
        String family = family();
        take(family + ":a");
        take(family + ":a");
        issuer.compact(Duration.ZERO, 100);
        assertThat(issuer.familyFloor(family)).hasValue(2);
        jdbc.update("INSERT INTO " + table + " (resource, holder, token, expires_at) VALUES (?, NULL, 0, NULL)",
                family + ":a");
        assertThat(issuer.highestIssued(family + ":a")).isEqualTo(2);
        try (Lease next = issuer.acquire(family + ":a", WAIT)) {
            assertThat(next.token().value()).isEqualTo(3);
        }
        assertThat(issuer.highestIssued(family + ":a")).isEqualTo(3);
    }

    @Test
    void compactionFoldsFreeIdleRowsOfAFamilyAndKeepsHeldAndUnkeyedOnes() {
        String family = family();
        for (int i = 0; i < 3; i++) {
            take(family + ":a");
        }
        take(family + ":b");
        String unkeyed = family + "-unkeyed";
        take(unkeyed);
        try (Lease held = issuer.acquire(family + ":held", WAIT)) {
            assertThat(issuer.compact(Duration.ofHours(1), 10)).isEqualTo(CompactionResult.NONE);
            assertThat(rows(family)).isEqualTo(3);

            CompactionResult result = issuer.compact(Duration.ZERO, 1);

            assertThat(result.folded()).isGreaterThanOrEqualTo(2); // other tests' idle rows may fold too
            assertThat(result.batches()).isGreaterThanOrEqualTo(2); // one row per batch
            assertThat(rows(family)).isEqualTo(1);
            assertThat(jdbc.queryForList("SELECT resource FROM " + table + " WHERE resource LIKE ?", String.class,
                    family + ":%")).containsExactly(family + ":held");
            assertThat(issuer.isHeld(family + ":held")).isTrue();
            assertThat(issuer.familyFloor(family)).hasValue(3);
            assertThat(issuer.highestIssued(family + ":a")).isEqualTo(3);
            assertThat(issuer.highestIssued(family + ":b")).isEqualTo(3);
            assertThat(issuer.highestIssued(unkeyed)).isEqualTo(1);
            assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE resource = ?", Integer.class,
                    unkeyed)).isEqualTo(1);
            assertThatThrownBy(() -> issuer.acquire(family + ":held", Duration.ZERO))
                    .isInstanceOf(LockAcquisitionException.class);
        }
        assertThat(take(family + ":a")).isEqualTo(4);
        assertThat(take(family + ":b")).isEqualTo(4);
        assertThat(take(family + ":held")).isEqualTo(4); // its own row kept token 1: max(1, floor 3) + 1
    }

    @Test
    void floorRowsAreNeverFoldedAlsoForFamiliesWithAColon() {
        // its floor row's key has a family of its own: the filter, not the family, keeps it
        String family = family() + ":eu";
        assertThat(take(family + ":1")).isEqualTo(1);
        issuer.raiseFamilyFloor(family, 5);

        issuer.compact(Duration.ZERO, 100);
        issuer.compact(Duration.ZERO, 100);

        assertThat(issuer.familyFloor(family)).hasValue(5);
        assertThat(take(family + ":1")).isEqualTo(6);
    }

    @Test
    void anExpiredLeaseIsFoldedAndItsHolderFindsItLost() {
        String family = family();
        Lease zombie = issuer.acquire(family + ":1", WAIT);
        jdbc.update("UPDATE " + table + " SET expires_at = CURRENT_TIMESTAMP WHERE resource = ?", family + ":1");

        CompactionResult result = issuer.compact(Duration.ZERO, 100);

        assertThat(result.folded()).isGreaterThanOrEqualTo(1);
        assertThat(rows(family)).isZero();
        assertThat(take(family + ":1")).isEqualTo(2);
        zombie.close();
        assertThat(zombie.isLost()).isTrue();
    }

    @Test
    void badArgumentsAreNamedAndChangeNothing() {
        String family = family();
        take(family + ":1");
        issuer.raiseFamilyFloor(family, 7);

        assertThatThrownBy(() -> issuer.compact(Duration.ofMillis(-1), 10))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("compact").hasMessageContaining(table).hasMessageContaining("idleFor")
                .hasMessageContaining("-0.001");
        assertThatThrownBy(() -> issuer.compact(Duration.ZERO, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("batchSize").hasMessageContaining("was 0");
        assertThatThrownBy(() -> issuer.raiseFamilyFloor(family, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("raiseFamilyFloor").hasMessageContaining(family).hasMessageContaining("-1");
        assertThatThrownBy(() -> issuer.raiseFamilyFloor(" ", 5))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("family must not be blank");
        assertThatThrownBy(() -> issuer.raiseFamilyFloor("a\u0001b", 5))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("control character");
        assertThatThrownBy(() -> issuer.raiseFamilyFloor("f".repeat(256), 5))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("256 chars");

        assertThat(rows(family)).isEqualTo(1);
        assertThat(issuer.familyFloor(family)).hasValue(7);
        assertThat(issuer.highestIssued(family + ":1")).isEqualTo(1);
    }

    /**
     * Threads acquire and release a few resources of one family while compaction loops with no age: rows are
     * folded and recreated all the time, and every resource's tokens, in the order its leases were held, still
     * strictly increase (an acquire that waited on a row being folded reads the raised floor, never the old one).
     */
    @Test
    void tokensStayStrictlyIncreasingWhileCompactionFoldsRowsUnderConcurrentAcquires() throws Exception {
        String family = family();
        int resources = 6;
        int threads = 4;
        Map<String, List<Long>> issued = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong folded = new AtomicLong();
        ExecutorService executor = Executors.newFixedThreadPool(threads + 1);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                work.add(executor.submit(() -> {
                    for (int i = 0; i < 60; i++) {
                        String resource = family + ":" + ThreadLocalRandom.current().nextInt(resources);
                        try (Lease lease = issuer.acquire(resource, WAIT)) {
                            // appended while the lease is held: each list is in lease order
                            issued.computeIfAbsent(resource, r -> Collections.synchronizedList(new ArrayList<>()))
                                    .add(lease.token().value());
                        }
                    }
                    return null;
                }));
            }
            Future<?> compactor = executor.submit(() -> {
                while (!stop.get()) {
                    folded.addAndGet(issuer.compact(Duration.ZERO, 2).folded());
                }
                return null;
            });
            for (Future<?> f : work) {
                f.get(90, TimeUnit.SECONDS);
            }
            stop.set(true);
            compactor.get(30, TimeUnit.SECONDS);
        } finally {
            stop.set(true);
            executor.shutdownNow();
        }

        assertThat(folded.get()).as("rows folded while acquiring").isPositive();
        assertThat(issued.values().stream().mapToInt(List::size).sum()).isEqualTo(threads * 60);
        issued.forEach((resource, tokens) -> {
            for (int i = 1; i < tokens.size(); i++) {
                assertThat(tokens.get(i)).as("token %d of %s after %s", i, resource, tokens.subList(0, i))
                        .isGreaterThan(tokens.get(i - 1));
            }
        });
        OptionalLong floor = issuer.familyFloor(family);
        assertThat(floor).isPresent();
    }
}

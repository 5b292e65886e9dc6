package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.Lease;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.MaxSeenReset;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
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
 * The JDBC store's retention under load on PostgreSQL, with the JDBC lease issuer (a counter per resource): fence
 * compaction told the issuer's floors, lease compaction, resets and zombies at once, families of families.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PostgreSqlRetentionUnderLoadTest {


    private static final String[] RESOURCES = {
            "p", "p:1", "p:2", "p:3", "p:4", "p:5", "p:1:1", "p:1:2", "p:1:1:x", "p:", "p::"};

    private HikariDataSource dataSource;
    private String fenceTable;
    private String leaseTable;
    private JdbcFenceStore store;
    private JdbcFenceAdmin admin;
    private JdbcTokenIssuer issuer;

    Database database() {
        return Database.POSTGRESQL;
    }

    /** A writer's pause between two writes (none: the hottest load). */
    long writerPauseMillis() {
        return 0;
    }

    /** The stores' lock wait bound (H2's compaction waits it out once per batch). */
    Duration lockTimeout() {
        return Duration.ofSeconds(2);
    }

    @BeforeEach
    void create() {
        dataSource = database().newPool(14);
        fenceTable = Database.uniqueTable("rt_fence");
        leaseTable = Database.uniqueTable("rt_lease");
        store = JdbcFenceStore.builder(dataSource).table(fenceTable).createTableIfMissing(true)
                .lockTimeout(lockTimeout()).build();
        issuer = JdbcTokenIssuer.builder(dataSource).table(leaseTable).createTableIfMissing(true)
                .leaseTime(Duration.ofMillis(150)).build();
        admin = new JdbcFenceAdmin(store);
    }

    @AfterEach
    void drop() {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
        jdbc.execute("DROP TABLE IF EXISTS " + leaseTable);
        dataSource.close();
    }

    private FencingToken acquireAndWrite(String resource) throws Throwable {
        try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(5))) {
            store.fence(resource, lease.token(), () -> null);
            return lease.token();
        }
    }

    /**
     * As ResetBesideCompactedFamilyTest in fencing-core, on the JDBC store and lease: holds on main (a refused check
     * leaves no row behind here), kept as a guard.
     */
    @Test
    void aRefusedZombieInACompactedFamilyDoesNotBlockTheResetOfAForgedToken() throws Throwable {
        FencingToken zombie = acquireAndWrite("acct:1");
        for (int i = 0; i < 3; i++) {
            acquireAndWrite("acct:2");
        }
        Thread.sleep(20);
        admin.compact(Duration.ZERO, 100, issuer);
        assertThat(admin.familyFloor("acct")).hasValue(3);
        assertThatThrownBy(() -> store.fence("acct:1", zombie, () -> null)).isInstanceOf(TokenRejectedException.class);
        assertThat(issuer.highestIssued("acct:1")).isEqualTo(1);
        // unlike the in-memory store, the refused check's row (at the floor) is rolled back with its transaction
        assertThat(admin.maxSeen("acct:1")).isEmpty();

        acquireAndWrite("orders");
        store.fence("orders", new FencingToken("orders", Long.MAX_VALUE, "evil"), () -> null);
        MaxSeenReset reset = new MaxSeenReset(admin, issuer, new AdminMetrics(new SimpleMeterRegistry()));

        assertThat(reset.toHighestIssued("orders", "ops:alice", false).current()).isEqualTo(1);
        assertThat(acquireAndWrite("acct:1").value()).isEqualTo(4);
    }

    @Test
    void acceptedTokensStayIncreasingPerResourceUnderBothCompactionsResetsAndZombies() throws Exception {
        MaxSeenReset reset = new MaxSeenReset(admin, issuer, new AdminMetrics(new SimpleMeterRegistry()));
        Map<String, List<FencingToken>> accepted = new ConcurrentHashMap<>();
        for (String r : RESOURCES) {
            accepted.put(r, Collections.synchronizedList(new ArrayList<>()));
        }
        List<FencingToken> pool = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong acceptedCount = new AtomicLong();
        AtomicLong foldedFence = new AtomicLong();
        AtomicLong foldedLease = new AtomicLong();
        AtomicLong lowered = new AtomicLong();
        Map<String, String> errors = new ConcurrentHashMap<>();
        ExecutorService threads = Executors.newFixedThreadPool(8);
        List<Future<?>> futures = new ArrayList<>();
        for (int w = 0; w < 5; w++) {
            futures.add(threads.submit(() -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                while (!stop.get()) {
                    String r = RESOURCES[rnd.nextInt(RESOURCES.length)];
                    FencingToken t;
                    if (rnd.nextInt(40) == 0) {
                        // a forged token (no signing, no bound): accepted, then undone by the resets
                        t = new FencingToken(r, Long.MAX_VALUE - rnd.nextInt(1000), "forged-" + rnd.nextInt(1000));
                    } else if (rnd.nextInt(3) == 0 && !pool.isEmpty()) {
                        t = pool.get(rnd.nextInt(pool.size()));
                        r = t.resource();
                    } else {
                        try (Lease lease = issuer.acquire(r, Duration.ofMillis(300))) {
                            t = lease.token();
                        } catch (RuntimeException e) {
                            errors.put("acquire " + e.getClass().getSimpleName(), String.valueOf(e.getMessage()));
                            continue;
                        }
                        pool.add(t);
                    }
                    String resource = r;
                    FencingToken presented = t;
                    try {
                        store.fence(resource, presented, () -> {
                            accepted.get(resource).add(presented);
                            acceptedCount.incrementAndGet();
                            return null;
                        });
                    } catch (TokenRejectedException refused) {
                        // fine
                    } catch (Throwable e) {
                        errors.put("fence " + e.getClass().getSimpleName(), String.valueOf(e.getMessage()));
                    }
                    if (writerPauseMillis() > 0) {
                        Thread.sleep(rnd.nextLong(writerPauseMillis() * 2));
                    }
                }
                return null;
            }));
        }
        futures.add(threads.submit(() -> {
            while (!stop.get()) {
                try {
                    foldedFence.addAndGet(admin.compact(Duration.ZERO, 1 + ThreadLocalRandom.current().nextInt(4),
                            issuer).folded());
                } catch (RuntimeException e) {
                    errors.put("compact " + e.getClass().getSimpleName(), String.valueOf(e.getMessage()));
                }
            }
            return null;
        }));
        futures.add(threads.submit(() -> {
            while (!stop.get()) {
                try {
                    foldedLease.addAndGet(issuer.compact(Duration.ZERO, 1 + ThreadLocalRandom.current().nextInt(4))
                            .folded());
                } catch (RuntimeException e) {
                    errors.put("lease compact " + e.getClass().getSimpleName(), String.valueOf(e.getMessage()));
                }
            }
            return null;
        }));
        futures.add(threads.submit(() -> {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            while (!stop.get()) {
                String r = RESOURCES[rnd.nextInt(RESOURCES.length)];
                try {
                    try {
                        reset.toHighestIssued(r, "under-load", rnd.nextInt(3) == 0);
                    } catch (dev.fencing.recovery.ResetRefusedException othersForgedToo) {
                        // other resources hold forged values too: the operator's way, an explicit value
                        reset.toValue(r, issuer.highestIssued(r), "under-load", true, rnd.nextBoolean());
                    }
                    lowered.incrementAndGet();
                } catch (RuntimeException refusedOrNothingToLower) {
                    // refused, nothing to lower, moved meanwhile
                }
                Thread.sleep(5);
            }
            return null;
        }));
        Thread.sleep(Long.getLong("retention.stress.millis", 4000));
        stop.set(true);
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        threads.shutdownNow();
        System.out.println("accepted " + acceptedCount + ", fence rows folded " + foldedFence + ", lease rows folded "
                + foldedLease + ", resets " + lowered + ", errors " + errors);
        assertThat(acceptedCount.get()).isGreaterThan(50);
        assertThat(foldedFence.get()).isPositive();
        List<String> violations = new ArrayList<>();
        accepted.forEach((r, list) -> {
            long max = 0;
            String holder = null;
            for (FencingToken t : list) {
                if (t.holder().startsWith("forged-")) {
                    continue; // the resets lower these, by design: only issued tokens must keep increasing
                }
                if (t.value() > max) {
                    max = t.value();
                    holder = t.holder();
                } else if (!(t.value() == max && t.holder().equals(holder))) {
                    violations.add(r + ": " + t + " accepted after " + max + "@" + holder);
                }
            }
        });
        Map<String, java.util.Set<Long>> issuedValues = new java.util.HashMap<>();
        for (FencingToken t : pool) {
            if (!issuedValues.computeIfAbsent(t.resource(), k -> new java.util.HashSet<>()).add(t.value())) {
                violations.add(t.resource() + ": value " + t.value() + " issued twice");
            }
        }
        assertThat(violations).isEmpty();
    }
}

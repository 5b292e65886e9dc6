package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * From a red-team review: eight threads fence three resources with tokens that are sometimes stale or duplicated (a
 * holder of its own), in every propagation around the fenced call at once: none (the store's own transaction),
 * REQUIRED (some then marked rollback-only), NESTED (some savepoints rolled back, the outer committing), REQUIRES_NEW
 * inside an outer transaction (some outers failing after it), SUPPORTS after a plain read, REPEATABLE READ or
 * SERIALIZABLE, NOT_SUPPORTED inside an outer one; some bodies fail. Each body reads the resource's register under
 * the fence (a locking read) and writes its token over it, logging what it read. In every committed log row the
 * register held an older token (or the same holder's), and no token has two holders. On PostgreSQL, with
 * default-mode and check-at-commit stores on one table, the commit order (a deferred trigger, which runs inside
 * COMMIT under the fence row) is the token order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(300)
class MixedPropagationStressTest {

    private final List<Runnable> cleanup = new ArrayList<>();

    @AfterAll
    void close() {
        cleanup.forEach(Runnable::run);
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void mixedPropagationNeverLetsAnOlderTokenWriteAfterANewerOne(Database db) throws Exception {
        run(db, false);
    }

    @org.junit.jupiter.api.Test
    void postgreSqlBothModesOnOneTableCommitInTokenOrder() throws Exception {
        run(Database.POSTGRESQL, true);
    }

    private void run(Database db, boolean atCommit) throws Exception {
        // both modes on one table deadlock by design (a check at commit after the body's row locks, a check first
        // before them): PostgreSQL finds each deadlock after deadlock_timeout, 1 s by default; a shorter one keeps
        // the run to seconds (the test's user is a superuser, who may set it)
        HikariDataSource pool = atCommit ? db.newPoolWith(20, "options=-c%20deadlock_timeout=100ms") : db.newPool(20);
        JdbcTemplate jdbc = new JdbcTemplate(pool);
        String fence = Database.uniqueTable("st_fence");
        String reg = Database.uniqueTable("st_reg");
        String log = Database.uniqueTable("st_log");
        cleanup.add(() -> {
            for (String t : List.of(fence, reg, log)) {
                jdbc.execute("DROP TABLE IF EXISTS " + t);
            }
            pool.close();
        });
        jdbc.execute("CREATE TABLE " + reg + " (k VARCHAR(64) PRIMARY KEY, token BIGINT, holder VARCHAR(64))");
        jdbc.execute(db.createDataTable(log).replace("v VARCHAR(64))",
                "v VARCHAR(64), prev BIGINT, prev_holder VARCHAR(64), scenario VARCHAR(32))"));
        DataSourceTransactionManager tm = new DataSourceTransactionManager(pool);
        JdbcFenceStore store = JdbcFenceStore.builder(pool).transactionManager(tm).table(fence)
                .createTableIfMissing(true).lockTimeout(Duration.ofSeconds(2)).build();
        store.verify();
        JdbcFenceStore atCommitStore = atCommit ? JdbcFenceStore.builder(pool).transactionManager(tm).table(fence)
                .lockTimeout(Duration.ofSeconds(2)).checkAtCommit(true).build() : null;
        String commits = Database.uniqueTable("st_commits");
        if (atCommit) {
            atCommitStore.verify();
            jdbc.execute("CREATE SEQUENCE " + commits + "_seq");
            jdbc.execute("CREATE TABLE " + commits + " (seq BIGINT, k VARCHAR(64), token BIGINT, holder VARCHAR(64))");
            jdbc.execute("CREATE FUNCTION " + commits + "_f() RETURNS trigger AS $$ BEGIN INSERT INTO " + commits
                    + " VALUES (nextval('" + commits + "_seq'), NEW.k, NEW.token, NEW.v); RETURN NULL; END $$ "
                    + "LANGUAGE plpgsql");
            jdbc.execute("CREATE CONSTRAINT TRIGGER " + commits + "_t AFTER INSERT ON " + log
                    + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION " + commits + "_f()");
            cleanup.add(0, () -> {
                jdbc.execute("DROP TABLE IF EXISTS " + log);
                jdbc.execute("DROP TABLE IF EXISTS " + commits);
                jdbc.execute("DROP FUNCTION IF EXISTS " + commits + "_f()");
                jdbc.execute("DROP SEQUENCE IF EXISTS " + commits + "_seq");
            });
        }
        List<String> resources = List.of("st:a", "st:b", "plain");
        Map<String, AtomicLong> counters = new ConcurrentHashMap<>();
        for (String r : resources) {
            jdbc.update("INSERT INTO " + reg + " (k, token, holder) VALUES (?, 0, 'none')", r);
            counters.put(r, new AtomicLong());
        }
        Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();
        ExecutorService threads = Executors.newFixedThreadPool(8);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            futures.add(threads.submit(() -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                for (int i = 0; i < 60; i++) {
                    String r = resources.get(rnd.nextInt(resources.size()));
                    long value = Math.max(1, counters.get(r).incrementAndGet() - rnd.nextInt(3));
                    String holder = rnd.nextInt(10) == 0 ? "dup-" + rnd.nextInt(1000) : "h" + value;
                    FencingToken token = new FencingToken(r, value, holder);
                    int scenario = rnd.nextInt(7);
                    int failure = rnd.nextInt(10);
                    String name = "s" + scenario + "f" + failure;
                    JdbcFenceStore chosen = atCommit && rnd.nextBoolean() ? atCommitStore : store;
                    Runnable fenced = () -> FencedCalls.fence(chosen, r, token, () -> {
                        Map<String, Object> prev = atCommit ? Map.of("token", 0L, "holder", "none")
                                : jdbc.queryForMap("SELECT token, holder FROM " + reg + " WHERE k = ? FOR UPDATE", r);
                        sleep(rnd.nextInt(4));
                        jdbc.update("UPDATE " + reg + " SET token = ?, holder = ? WHERE k = ?", value, holder, r);
                        jdbc.update("INSERT INTO " + log + " (k, token, v, prev, prev_holder, scenario) VALUES "
                                + "(?, ?, ?, ?, ?, ?)", r, value, holder, ((Number) prev.get("token")).longValue(),
                                prev.get("holder"), name);
                        if (failure == 0) {
                            throw new IllegalStateException("body failed");
                        }
                    });
                    Throwable thrown;
                    try {
                        switch (scenario) {
                            case 0 -> fenced.run();
                            case 1 -> new TransactionTemplate(tm).executeWithoutResult(s -> {
                                fenced.run();
                                if (failure == 1) {
                                    s.setRollbackOnly();
                                }
                            });
                            case 2 -> new TransactionTemplate(tm).executeWithoutResult(s -> {
                                TransactionTemplate nested = new TransactionTemplate(tm);
                                nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
                                try {
                                    nested.executeWithoutResult(n -> {
                                        fenced.run();
                                        if (failure == 2) {
                                            throw new IllegalArgumentException("nested failed");
                                        }
                                    });
                                } catch (IllegalArgumentException expected) {
                                    // the savepoint rolled back; the outer goes on and commits
                                }
                            });
                            case 3 -> new TransactionTemplate(tm).executeWithoutResult(s -> {
                                jdbc.queryForList("SELECT k FROM " + reg);
                                TransactionTemplate own = new TransactionTemplate(tm);
                                own.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
                                own.executeWithoutResult(n -> fenced.run());
                                if (failure == 3) {
                                    throw new IllegalArgumentException("outer failed after inner committed");
                                }
                            });
                            case 4 -> {
                                TransactionTemplate supports = new TransactionTemplate(tm);
                                supports.setPropagationBehavior(TransactionDefinition.PROPAGATION_SUPPORTS);
                                supports.executeWithoutResult(s -> {
                                    jdbc.queryForList("SELECT k FROM " + reg);
                                    fenced.run();
                                });
                            }
                            case 5 -> {
                                TransactionTemplate rr = new TransactionTemplate(tm);
                                rr.setIsolationLevel(rnd.nextBoolean() ? TransactionDefinition.ISOLATION_SERIALIZABLE
                                        : TransactionDefinition.ISOLATION_REPEATABLE_READ);
                                rr.executeWithoutResult(s -> fenced.run());
                            }
                            default -> new TransactionTemplate(tm).executeWithoutResult(s -> {
                                TransactionTemplate ns = new TransactionTemplate(tm);
                                ns.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
                                ns.executeWithoutResult(n -> fenced.run());
                            });
                        }
                        thrown = null;
                    } catch (Throwable e) {
                        thrown = e;
                    }
                    outcomes.computeIfAbsent(thrown == null ? "ok" : thrown.getClass().getSimpleName(),
                            k -> new AtomicLong()).incrementAndGet();
                }
                return null;
            }));
        }
        for (Future<?> f : futures) {
            f.get(240, TimeUnit.SECONDS);
        }
        threads.shutdown();
        List<Map<String, Object>> rows = jdbc.queryForList("SELECT k, token, v, prev, prev_holder, scenario FROM "
                + log + " ORDER BY id");
        List<String> bad = new ArrayList<>();
        Map<String, String> holderOf = new java.util.HashMap<>();
        for (Map<String, Object> row : rows) {
            long token = ((Number) row.get("token")).longValue();
            long prev = ((Number) row.get("prev")).longValue();
            String holder = (String) row.get("v");
            if (prev > token || prev == token && !holder.equals(row.get("prev_holder"))) {
                bad.add("older after newer: " + row);
            }
            String key = row.get("k") + "#" + token;
            String other = holderOf.putIfAbsent(key, holder);
            if (other != null && !other.equals(holder)) {
                bad.add("two holders of one token: " + row + " and " + other);
            }
        }
        if (atCommit) {
            Map<String, long[]> last = new java.util.HashMap<>();
            Map<String, String> lastHolder = new java.util.HashMap<>();
            for (Map<String, Object> row : jdbc.queryForList("SELECT k, token, holder FROM " + commits
                    + " ORDER BY seq")) {
                String k = (String) row.get("k");
                long token = ((Number) row.get("token")).longValue();
                long[] before = last.get(k);
                if (before != null && (before[0] > token || before[0] == token
                        && !row.get("holder").equals(lastHolder.get(k)))) {
                    bad.add("committed after a newer one: " + row + " after " + before[0] + "@" + lastHolder.get(k));
                }
                last.put(k, new long[] {token});
                lastHolder.put(k, (String) row.get("holder"));
            }
        }
        System.out.println("stress " + db + (atCommit ? " both modes" : "") + ": " + rows.size() + " committed, "
                + "outcomes " + outcomes + ", bad " + bad);
        assertThat(bad).isEmpty();
        assertThat(rows).as("enough committed to mean something").hasSizeGreaterThan(100);
        assertThat(outcomes).as("stale tokens were presented and refused").containsKey("StaleTokenException");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

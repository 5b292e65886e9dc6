package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.testsupport.RemoteTokenIssuerContract;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The issuer contract for the database lease, on a real database, plus what a lease on wall-clock time implies. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcTokenIssuerContract extends RemoteTokenIssuerContract {

    private HikariDataSource pool;
    private HikariDataSource unreachablePool;
    private JdbcTemplate jdbc;
    private String leaseTable;
    private String fenceTable;
    private JdbcTokenIssuer issuer;
    private JdbcTokenIssuer otherIssuer;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final AtomicLong skew = new AtomicLong(); // moves the issuer's lease clock forward, see expire

    abstract Database database();

    @BeforeAll
    void start() {
        pool = database().newPool(10);
        jdbc = new JdbcTemplate(pool);
        leaseTable = Database.uniqueTable("lease");
        fenceTable = Database.uniqueTable("fence");
        issuer = JdbcTokenIssuer.builder(pool).table(leaseTable).createTableIfMissing(true)
                .meterRegistry(registry).build();
        issuer.nanoClock = () -> System.nanoTime() + skew.get();
    }

    @AfterAll
    void stop() {
        jdbc.execute("DROP TABLE IF EXISTS " + leaseTable);
        jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
        pool.close();
        if (unreachablePool != null) {
            unreachablePool.close();
        }
    }

    @Override
    protected TokenIssuer issuer() {
        return issuer;
    }

    /**
     * A second issuer on the same lease table, as another instance of the application (or this one restarted)
     * builds: it sees the first one's leases and continues its tokens.
     */
    @Override
    protected TokenIssuer otherIssuer() {
        if (otherIssuer == null) {
            otherIssuer = JdbcTokenIssuer.builder(pool).table(leaseTable).build();
        }
        return otherIssuer;
    }

    @Override
    protected void afterNextGrant(String resource, Runnable action) {
        issuer.afterGrant = once(resource, action);
    }

    /**
     * The lease runs out: its row expires now in the database, and the issuer's clock moves past the lease time
     * (30 s), as for a holder paused that long.
     */
    @Override
    protected void expire(Lease lease) {
        jdbc.update("UPDATE " + leaseTable + " SET expires_at = CURRENT_TIMESTAMP WHERE resource = ?",
                lease.token().resource());
        skew.addAndGet(Duration.ofSeconds(31).toNanos());
    }

    @Override
    protected MeterRegistry registry() {
        return registry;
    }

    @Override
    protected TokenIssuer unreachableIssuer() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(database() == Database.MARIADB ? "jdbc:mariadb://127.0.0.1:1/test"
                : "jdbc:postgresql://127.0.0.1:1/test");
        config.setConnectionTimeout(500);
        config.setInitializationFailTimeout(-1);
        config.setPoolName("unreachable-db");
        unreachablePool = new HikariDataSource(config);
        return JdbcTokenIssuer.builder(unreachablePool).dialect(database() == Database.MARIADB
                        ? JdbcDialect.MARIADB : JdbcDialect.POSTGRESQL)
                .verifyOnBuild(false).name("unreachable-db").build();
    }

    @Override
    protected String unreachableServiceName() {
        return "unreachable-db";
    }

    /**
     * A lock taken and released inside the caller's transaction (an {@code @Fenced(acquire = true) @Transactional}
     * method) stays released when that transaction rolls back, or was already aborted by a failed statement: the
     * next acquirer gets it at once instead of waiting out the lease.
     */
    @Test
    void aReleaseInsideACallersTransactionThatRollsBackStillFreesTheLock() {
        TransactionTemplate caller = new TransactionTemplate(new DataSourceTransactionManager(pool));
        for (boolean aborted : new boolean[] {false, true}) {
            String resource = freshResource();
            caller.executeWithoutResult(status -> {
                Lease lease = issuer.acquire(resource, Duration.ofSeconds(5));
                if (aborted) {
                    // aborts PostgreSQL's
                    assertThatThrownBy(() -> jdbc.queryForObject("SELECT 1 FROM fencing_no_such_table", Integer.class));
                }
                lease.close();
                status.setRollbackOnly();
            });
            Lease next = issuer.acquire(resource, Duration.ofMillis(500));
            next.close();
        }
    }

    @Test
    void tokensSurviveARestart() {
        String r = freshResource();
        Lease first = issuer.acquire(r, Duration.ofSeconds(10));
        first.close();
        try (HikariDataSource fresh = database().newPool(2)) {
            JdbcTokenIssuer restarted = JdbcTokenIssuer.builder(fresh).table(leaseTable).build();
            Lease next = restarted.acquire(r, Duration.ofSeconds(10));
            assertThat(next.token().value()).isEqualTo(first.token().value() + 1);
            next.close();
        }
    }

    @Test
    void anExpiredLeaseIsTakenOverAndTheFenceStopsTheOldHolder() throws Throwable {
        SimpleMeterRegistry shortRegistry = new SimpleMeterRegistry();
        JdbcTokenIssuer shortLeases = JdbcTokenIssuer.builder(pool).table(leaseTable)
                .leaseTime(Duration.ofMillis(1_500)).meterRegistry(shortRegistry).build();
        JdbcFenceStore store = JdbcFenceStore.builder(pool).table(fenceTable).createTableIfMissing(true).build();
        store.verify(); // at startup, not inside the lease below (long enough for a stalled VM to check inside it)
        String r = freshResource();
        List<String> data = new ArrayList<>();

        Lease zombie = shortLeases.acquire(r, Duration.ofSeconds(10));
        FencingToken zombieToken = zombie.token();
        store.fence(r, zombieToken, () -> data.add("zombie before its pause"));
        assertThatThrownBy(() -> shortLeases.acquire(r, Duration.ofMillis(50)))
                .isInstanceOf(LockAcquisitionException.class);   // still held

        Thread.sleep(1_700);                                        // the zombie pauses past its lease
        assertThat(zombie.isLost()).isTrue();
        Lease next = shortLeases.acquire(r, Duration.ofSeconds(10));
        assertThat(next.token().value()).isEqualTo(zombieToken.value() + 1);
        store.fence(r, next.token(), () -> data.add("X"));
        assertThatThrownBy(() -> store.fence(r, zombieToken, () -> data.add("Y")))
                .isInstanceOf(StaleTokenException.class);
        assertThat(data).containsExactly("zombie before its pause", "X");

        zombie.close();   // must not free the new holder's lease, and counts the loss
        assertThat(jdbc.queryForObject("SELECT holder FROM " + leaseTable + " WHERE resource = ?", String.class, r))
                .isEqualTo(next.token().holder());
        assertThat(shortRegistry.get("fencing.issuer.leases.lost").tag("issuer", "jdbc").counter().count())
                .isEqualTo(1);
        next.close();
    }

    @Test
    void missingTableFailsAtVerifySayingWhatToDo() {
        assertThatThrownBy(() -> JdbcTokenIssuer.builder(pool).table(Database.uniqueTable("nolease")).build().verify())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("dev/fencing/jdbc/lease-").hasMessageContaining("createTableIfMissing(true)");
        assertThatThrownBy(() -> JdbcTokenIssuer.builder(pool).table("x; drop").build())
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("'x; drop' is invalid");
    }

    /** Waits until {@code count} of the issuer's acquirers wait in {@code resource}'s line. */
    private void awaitWaiting(String resource, int count) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (issuer.waiting(resource) != count) {
            assertThat(System.nanoTime()).as("%s waiting for '%s'", count, resource).isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    /** Acquires {@code resource} on a thread of its own, records its name once the lease is taken, then releases. */
    private Thread acquirer(String name, String resource, Duration timeout, List<String> order,
            List<Throwable> failed) {
        Thread thread = new Thread(() -> {
            try (Lease ignored = issuer.acquire(resource, timeout)) {
                synchronized (order) {
                    order.add(name);
                }
            } catch (Throwable t) {
                synchronized (failed) {
                    failed.add(t);
                }
            }
        }, name);
        thread.start();
        return thread;
    }

    @Test
    @Timeout(60)
    void waitersOfOneIssuerTakeAFreedLeaseInTheOrderTheyCame() throws Exception {
        String r = freshResource();
        List<String> order = new ArrayList<>();
        List<Throwable> failed = new ArrayList<>();
        // held by another instance: its release wakes nobody here, so the waiters' polling decides who is next
        JdbcTokenIssuer elsewhere = JdbcTokenIssuer.builder(pool).table(leaseTable).build();
        Lease held = elsewhere.acquire(r, Duration.ofSeconds(5));
        List<Thread> threads = new ArrayList<>();
        for (String name : List.of("first", "second", "third")) {
            threads.add(acquirer(name, r, Duration.ofSeconds(30), order, failed));
            awaitWaiting(r, threads.size());
            // the first now polls at its longest pause, a newcomer at once
            Thread.sleep(name.equals("first") ? 700 : 20);
        }
        held.close();
        for (Thread thread : threads) {
            thread.join(30_000);
        }
        assertThat(failed).isEmpty();
        assertThat(order).containsExactly("first", "second", "third");
        assertThat(issuer.hasLine(r)).as("a line is removed with its last waiter").isFalse();
    }

    @Test
    @Timeout(60)
    void aReleaseHereWakesTheFirstWaiterAtOnceRatherThanAtItsNextPoll() throws Exception {
        String r = freshResource();
        long firstPause = issuer.firstPauseMillis;
        long maxPause = issuer.maxPauseMillis;
        issuer.firstPauseMillis = 120_000; // a poll would come after the test's timeout: only a wake-up lets it in
        issuer.maxPauseMillis = 120_000;
        try {
            List<String> order = new ArrayList<>();
            List<Throwable> failed = new ArrayList<>();
            Lease held = issuer.acquire(r, Duration.ofSeconds(5));
            Thread waiter = acquirer("waiter", r, Duration.ofSeconds(100), order, failed);
            awaitWaiting(r, 1);
            held.close();
            waiter.join(30_000);
            assertThat(failed).isEmpty();
            assertThat(order).containsExactly("waiter");
        } finally {
            issuer.firstPauseMillis = firstPause;
            issuer.maxPauseMillis = maxPause;
        }
    }

    @Test
    @Timeout(60)
    void aWaiterThatGivesUpOrIsInterruptedLeavesTheLineToTheNext() throws Exception {
        String r = freshResource();
        List<String> order = new ArrayList<>();
        List<Throwable> failed = new ArrayList<>();
        Lease held = issuer.acquire(r, Duration.ofSeconds(5));
        Thread impatient = acquirer("impatient", r, Duration.ofMillis(400), order, failed);
        awaitWaiting(r, 1);
        Thread interrupted = acquirer("interrupted", r, Duration.ofSeconds(30), order, failed);
        awaitWaiting(r, 2);
        Thread patient = acquirer("patient", r, Duration.ofSeconds(30), order, failed);
        awaitWaiting(r, 3);
        impatient.join(30_000);
        interrupted.interrupt();
        interrupted.join(30_000);
        awaitWaiting(r, 1);
        held.close();
        patient.join(30_000);
        assertThat(order).containsExactly("patient");
        assertThat(failed).hasSize(2).allSatisfy(e -> assertThat(e).isInstanceOf(LockAcquisitionException.class));
        assertThat(failed).anySatisfy(e -> assertThat(e).hasMessageContaining("Timed out after 400 ms"))
                .anySatisfy(e -> assertThat(e).hasMessageContaining("Interrupted"));
        assertThat(issuer.hasLine(r)).isFalse();
    }

    @Test
    void countsAcquisitions() {
        Lease lease = issuer.acquire(freshResource(), Duration.ofSeconds(10));
        lease.close();
        assertThat(registry.get("fencing.issuer.acquisitions").tag("issuer", "jdbc").tag("outcome", "acquired")
                .counter().count()).isPositive();
    }

    /**
     * A lease is the issuer's own: acquiring and releasing one inside a caller's transaction whose connection is
     * bound to the same DataSource the way {@code JpaTransactionManager} binds it (a {@code ConnectionHolder} for JDBC
     * code, not marked as a {@code DataSourceTransactionManager} transaction) neither runs on that connection nor
     * commits it: the caller's uncommitted write still rolls back. (Found by fencing-it-boot: with Boot's
     * JpaTransactionManager, {@code @Fenced(acquire = true) @Transactional} committed the JPA transaction's work,
     * fence row included, when the lease was released.)
     */
    @Test
    void aLeaseNeverUsesOrCommitsTheConnectionOfTheCallersTransaction() throws Exception {
        String callerTable = Database.uniqueTable("caller");
        jdbc.execute("CREATE TABLE " + callerTable + " (id INT NOT NULL)");
        try {
            try (Connection connection = pool.getConnection()) {
                connection.setAutoCommit(false);
                TransactionSynchronizationManager.initSynchronization();
                TransactionSynchronizationManager.setActualTransactionActive(true);
                TransactionSynchronizationManager.bindResource(pool,
                        new ConnectionHolder(connection));
                try {
                    jdbc.update("INSERT INTO " + callerTable + " (id) VALUES (1)"); // on the bound connection
                    try (Lease lease = issuer.acquire("caller-transaction", Duration.ofSeconds(5))) {
                        assertThat(lease.isHeld()).isTrue();
                    }
                } finally {
                    TransactionSynchronizationManager.unbindResource(pool);
                    TransactionSynchronizationManager.clear();
                }
                assertThat(connection.getAutoCommit()).as("the caller's connection is left as it was").isFalse();
                connection.rollback();
            }
            assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + callerTable, Integer.class))
                    .as("the caller's write rolled back: the issuer did not commit the caller's connection")
                    .isZero();
        } finally {
            jdbc.execute("DROP TABLE " + callerTable);
        }
    }
}

package dev.fencing.integration;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The seed's HDFS case with Spring Integration's leader election: two {@link LockRegistryLeaderInitiator}s, each over
 * its own {@link FencedLockRegistry} and {@link JdbcTokenIssuer} (two processes sharing one lease table on
 * PostgreSQL). Leader A's work pauses past its lease; A's heartbeat finds the lease lost and revokes, B is elected and
 * writes with a larger token; then A's work wakes and writes with the token of its term. With the fence
 * ({@link JdbcFenceStore}) that write is refused and B's data stays; without it, A's stale write lands over B's.
 */
@Timeout(60)
class LeaderElectionZombieTest {

    private static final String ROLE = "report-writer";
    private static final String RESOURCE = "leader:" + ROLE;
    private static final Duration LEASE = Duration.ofMillis(1000);

    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private final String leaseTable = "si_lease_" + suffix;
    private final String fenceTable = "si_fence_" + suffix;
    private final String dataTable = "si_data_" + suffix;
    private final List<LockRegistryLeaderInitiator> initiators = new ArrayList<>();
    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private JdbcFenceStore store;

    @BeforeEach
    void createTables() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:postgresql://127.0.0.1:5432/test");
        config.setUsername("postgres");
        config.setMaximumPoolSize(6);
        config.setConnectionTimeout(10_000);
        config.setPoolName("fencing-si-test");
        pool = new HikariDataSource(config);
        jdbc = new JdbcTemplate(pool);
        jdbc.execute("CREATE TABLE " + dataTable + " (id VARCHAR(64) PRIMARY KEY, v VARCHAR(64), token BIGINT)");
        jdbc.update("INSERT INTO " + dataTable + " VALUES ('report', 'initial', 0)");
        store = JdbcFenceStore.builder(pool).transactionManager(new DataSourceTransactionManager(pool))
                .table(fenceTable).createTableIfMissing(true).build();
    }

    @AfterEach
    void dropTables() {
        initiators.forEach(initiator -> {
            try {
                initiator.destroy();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            for (String table : List.of(dataTable, fenceTable, leaseTable)) {
                jdbc.execute("DROP TABLE IF EXISTS " + table);
            }
        } finally {
            pool.close();
        }
    }

    @Test
    void withTheFenceTheDeposedLeadersWriteIsRefused() throws Exception {
        Race race = run(true);
        assertThat(race.bToken.value()).isGreaterThan(race.aToken.value());
        assertThat(race.aWrite).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
                .havingRootCause().isInstanceOf(StaleTokenException.class)
                .withMessageContaining(RESOURCE);
        assertThat(report()).isEqualTo("B@" + race.bToken.value());
    }

    @Test
    void withoutTheFenceTheDeposedLeadersWriteLandsOverTheNewLeaders() throws Exception {
        Race race = run(false);
        assertThat(race.bToken.value()).isGreaterThan(race.aToken.value());
        assertThat(race.aWrite.get(10, TimeUnit.SECONDS)).as("A's stale write was applied").isEqualTo(1);
        assertThat(report()).as("B's write is lost").isEqualTo("A@" + race.aToken.value());
    }

    /** Leader A pauses past its lease, B takes over and writes, then A wakes and writes. */
    private Race run(boolean fenced) throws Exception {
        CompletableFuture<FencingToken> grantedA = new CompletableFuture<>();
        CountDownLatch revokedA = new CountDownLatch(1);
        CountDownLatch resumeA = new CountDownLatch(1);
        CompletableFuture<Integer> aWrite = new CompletableFuture<>();
        FencedLockRegistry registryA = new FencedLockRegistry(issuer(), "leader:");
        FencedCandidate candidateA = new FencedCandidate(registryA, "a", ROLE) {
            @Override
            protected void onGranted(Context context, FencingToken token) {
                if (grantedA.complete(token)) {
                    new Thread(() -> { // the leader's work, on a thread of its own, with its term's token bound
                        try (FencingScope scope = FencingContext.bind(token)) {
                            resumeA.await(); // the pause: a GC, a stalled disk
                            aWrite.complete(write("A", fenced));
                        } catch (Throwable e) {
                            aWrite.completeExceptionally(e);
                        }
                    }, "leader-a-work").start();
                }
            }

            @Override
            public void onRevoked(Context context) {
                revokedA.countDown();
            }
        };

        CompletableFuture<FencingToken> grantedB = new CompletableFuture<>();
        CompletableFuture<Integer> bWrite = new CompletableFuture<>();
        FencedLockRegistry registryB = new FencedLockRegistry(issuer(), "leader:");
        FencedCandidate candidateB = new FencedCandidate(registryB, "b", ROLE) {
            @Override
            protected void onGranted(Context context, FencingToken token) {
                if (grantedB.complete(token)) {
                    new Thread(() -> {
                        try (FencingScope scope = FencingContext.bind(token)) {
                            bWrite.complete(write("B", fenced));
                        } catch (Throwable e) {
                            bWrite.completeExceptionally(e);
                        }
                    }, "leader-b-work").start();
                }
            }

            @Override
            public void onRevoked(Context context) {
            }
        };

        // A is elected first; once deposed it waits long before competing again, so B is the next leader
        initiator(registryA, candidateA, 30_000).start();
        FencingToken aToken = grantedA.get(10, TimeUnit.SECONDS);
        initiator(registryB, candidateB, 50).start();

        assertThat(revokedA.await(10, TimeUnit.SECONDS)).as("A's heartbeat found its lease lost").isTrue();
        FencingToken bToken = grantedB.get(10, TimeUnit.SECONDS);
        assertThat(bWrite.get(10, TimeUnit.SECONDS)).as("B's write").isEqualTo(1);
        assertThat(report()).isEqualTo("B@" + bToken.value());

        resumeA.countDown(); // A wakes up, still holding the token of its term
        return new Race(aToken, bToken, aWrite);
    }

    private JdbcTokenIssuer issuer() {
        return JdbcTokenIssuer.builder(pool).table(leaseTable).createTableIfMissing(true).leaseTime(LEASE).build();
    }

    private LockRegistryLeaderInitiator initiator(FencedLockRegistry registry, FencedCandidate candidate,
                                                  long busyWait) {
        LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, candidate);
        initiator.setHeartBeatMillis(100);
        initiator.setBusyWaitMillis(busyWait);
        initiators.add(initiator);
        return initiator;
    }

    /** The leader's write: the token bound on this thread, checked by the fence store, or not checked at all. */
    private int write(String who, boolean fenced) throws Throwable {
        FencingToken token = FencingContext.current(RESOURCE);
        String sql = "UPDATE " + dataTable + " SET v = ?, token = ? WHERE id = 'report'";
        if (!fenced) {
            return jdbc.update(sql, who, token.value());
        }
        return store.fence(RESOURCE, token, () -> jdbc.update(sql, who, token.value()));
    }

    private String report() {
        return jdbc.queryForObject("SELECT v || '@' || token FROM " + dataTable + " WHERE id = 'report'", String.class);
    }

    private record Race(FencingToken aToken, FencingToken bToken, CompletableFuture<Integer> aWrite) {
    }
}

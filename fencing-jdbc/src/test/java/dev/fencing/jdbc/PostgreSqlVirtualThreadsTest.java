package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.context.FencingContext;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Thousands of virtual threads (Java 21 and later; skipped on 17) acquiring {@link JdbcTokenIssuer} leases and
 * writing through a {@link JdbcFenceStore} on PostgreSQL, on a pool of ten connections, over a few resources and on
 * fresh tables that their first calls verify and create at once: no hang, every write under its own lease's token in
 * token order per resource, each call counted once.
 */
@Timeout(300)
class PostgreSqlVirtualThreadsTest {

    private final List<String> tables = new ArrayList<>();
    private HikariDataSource pool;

    @AfterEach
    void drop() {
        if (pool != null) {
            JdbcTemplate admin = new JdbcTemplate(pool);
            tables.forEach(t -> admin.execute("DROP TABLE IF EXISTS " + t));
            pool.close();
        }
    }

    @Test
    void thousandsOfVirtualThreadsLeaseAndWriteInTokenOrder() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21");
        int calls = 2_000;
        int resources = 4;
        pool = Database.POSTGRESQL.newPool(10);
        pool.setConnectionTimeout(120_000);
        String fence = Database.uniqueTable("vthreads_fence");
        String lease = Database.uniqueTable("vthreads_lease");
        String data = Database.uniqueTable("vthreads_data");
        tables.addAll(List.of(fence, lease, data));
        JdbcTemplate jdbc = new JdbcTemplate(pool);
        jdbc.execute(Database.POSTGRESQL.createDataTable(data));
        DataSourceTransactionManager manager = new DataSourceTransactionManager(pool);
        JdbcFenceStore store = JdbcFenceStore.builder(pool).table(fence).transactionManager(manager)
                .createTableIfMissing(true).build();
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(pool).table(lease).createTableIfMissing(true).build();
        TransactionTemplate transactions = new TransactionTemplate(manager);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FencingMetrics metrics = new FencingMetrics(registry);
        FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(240));
        AtomicInteger failed = new AtomicInteger();
        AtomicReference<Throwable> firstFailure = new AtomicReference<>();
        ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
                .invoke(null);
        try {
            for (int i = 0; i < calls; i++) {
                String resource = "vthreads-" + (i % resources);
                FencePoint service = new FencePoint("Service.run()", resource, null, null, true, metrics);
                FencePoint repo = new FencePoint("Repo.write()", resource, null, null, false, metrics);
                virtual.execute(() -> {
                    try {
                        guard.invoke(service, new Object[0], () -> transactions.execute(status -> {
                            try {
                                return guard.invoke(repo, new Object[0], () -> {
                                    FencingToken token = FencingContext.current(resource);
                                    return jdbc.update("INSERT INTO " + data + " (k, token) VALUES (?, ?)",
                                            resource, token.value());
                                });
                            } catch (RuntimeException | Error e) {
                                throw e;
                            } catch (Throwable e) {
                                throw new IllegalStateException(e);
                            }
                        }));
                    } catch (Throwable e) {
                        failed.incrementAndGet();
                        firstFailure.compareAndSet(null, e);
                    }
                });
            }
        } finally {
            virtual.shutdown();
            assertThat(virtual.awaitTermination(280, TimeUnit.SECONDS)).as("all calls done: no hang").isTrue();
        }
        assertThat(firstFailure.get()).isNull();
        assertThat(failed).hasValue(0);
        for (int r = 0; r < resources; r++) {
            List<Long> tokens = jdbc.queryForList("SELECT token FROM " + data + " WHERE k = ? ORDER BY id", Long.class,
                    "vthreads-" + r);
            assertThat(tokens).hasSize(calls / resources).isSorted().doesNotHaveDuplicates();
        }
        double accepted = registry.find(FencingMetrics.CHECKS).tag("outcome", "accepted").counters().stream()
                .mapToDouble(c -> c.count()).sum();
        assertThat(accepted).isEqualTo(calls);
    }
}

package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.Lease;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On PostgreSQL the first lease of a resource is taken in one transaction (insert the row, lock it, take it), not
 * three; and acquirers racing for the same new resource still get distinct, increasing tokens.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PostgreSqlLeaseFirstAcquisitionTest {

    private HikariDataSource pool;
    private String table;
    private final AtomicInteger commits = new AtomicInteger();

    @BeforeAll
    void start() {
        pool = Database.POSTGRESQL.newPool(10);
        table = Database.uniqueTable("lease1st");
    }

    @AfterAll
    void stop() {
        new JdbcTemplate(pool).execute("DROP TABLE IF EXISTS " + table);
        pool.close();
    }

    /** The pool, counting the commits made on its connections. */
    private DelegatingDataSource counting() {
        return new DelegatingDataSource(pool) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                        new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                            if (method.getName().equals("commit")) {
                                commits.incrementAndGet();
                            }
                            try {
                                return method.invoke(connection, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
            }
        };
    }

    @Test
    void aNewResourcesFirstLeaseIsOneCommit() {
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(counting()).table(table).createTableIfMissing(true).build();
        issuer.verify();
        String resource = "orders:" + UUID.randomUUID();
        commits.set(0);
        try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(10))) {
            assertThat(commits.get()).as("commits to take a new resource's lease").isEqualTo(1);
            assertThat(lease.token().value()).isEqualTo(1);
        }
        commits.set(0);
        try (Lease again = issuer.acquire(resource, Duration.ofSeconds(10))) {
            assertThat(commits.get()).as("commits to take an existing resource's lease").isEqualTo(1);
            assertThat(again.token().value()).isEqualTo(2);
        }
    }

    @Test
    void acquirersRacingForANewResourceGetDistinctIncreasingTokens() throws Exception {
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(pool).table(table).createTableIfMissing(true).build();
        JdbcTokenIssuer other = JdbcTokenIssuer.builder(pool).table(table).build(); // another instance
        issuer.verify();
        for (int round = 0; round < 5; round++) {
            String resource = "race:" + UUID.randomUUID();
            Set<Long> tokens = ConcurrentHashMap.newKeySet();
            List<Throwable> failed = new ArrayList<>();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                JdbcTokenIssuer by = i % 2 == 0 ? issuer : other;
                Thread thread = new Thread(() -> {
                    try {
                        start.await();
                        try (Lease lease = by.acquire(resource, Duration.ofSeconds(30))) {
                            tokens.add(lease.token().value());
                        }
                    } catch (Throwable t) {
                        synchronized (failed) {
                            failed.add(t);
                        }
                    }
                });
                thread.start();
                threads.add(thread);
            }
            start.countDown();
            for (Thread thread : threads) {
                thread.join(30_000);
            }
            assertThat(failed).isEmpty();
            assertThat(tokens).containsExactlyInAnyOrder(1L, 2L, 3L, 4L, 5L, 6L);
        }
    }
}

package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * {@code @Transactional @Fenced(acquire = true)} with the JDBC lease issuer on the application's own pool: the lock is
 * taken before the transaction begins and given back after it ends, so a call never holds two connections at once.
 * Had the acquire run inside the transaction, every call would hold its transaction's connection while waiting for a
 * second one for the lease: with more concurrent calls than connections, all of them wait until the pool times out.
 */
class PoolUnderAcquireTest {

    public static class Ledger {
        private final JdbcTemplate jdbc;

        public Ledger(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @Transactional
        @Fenced(resource = "ledger", key = "#account", acquire = true)
        public long post(long account) throws InterruptedException {
            long token = FencingContext.current("ledger:" + account).value();
            Thread.sleep(20); // work inside the transaction, holding its connection
            return token;
        }
    }

    @Test
    void moreConcurrentAcquiringCallsThanConnectionsAllComplete() throws Exception {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                        FencingJdbcAutoConfiguration.class, DataSourceAutoConfiguration.class,
                        DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
                        JdbcTemplateAutoConfiguration.class))
                .withBean(Ledger.class)
                .withPropertyValues("spring.datasource.url=jdbc:h2:mem:pool;DB_CLOSE_DELAY=-1",
                        "spring.datasource.hikari.maximum-pool-size=2",
                        "spring.datasource.hikari.connection-timeout=1000",
                        "fencing.issuer.type=jdbc")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Ledger ledger = context.getBean(Ledger.class);
                    ExecutorService threads = Executors.newFixedThreadPool(6);
                    try {
                        List<Future<Long>> calls = new ArrayList<>();
                        for (int i = 0; i < 24; i++) {
                            long account = i % 6;
                            calls.add(threads.submit(() -> ledger.post(account)));
                        }
                        for (Future<Long> call : calls) {
                            assertThat(call.get(60, TimeUnit.SECONDS)).isPositive();
                        }
                    } finally {
                        threads.shutdownNow();
                    }
                });
    }
}

package dev.fencing.spring;

import dev.fencing.annotation.Fenced;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.InMemoryFenceStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Through Spring's proxies and transactions: an {@code @Fenced(acquire = true)} method that writes around the
 * {@code @Fenced} repository is counted in {@code fencing.leases.unchecked}; one that writes through it is not, and in
 * one transaction the lock's checks count for every acquiring call that reused it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UncheckedLeaseWiringTest {

    static class Accounts {
        final Map<Long, Long> writtenAroundTheFence = new ConcurrentHashMap<>();
        Fixtures.AccountRepository repository;

        @Fenced(resource = "accounts", key = "#id", acquire = true)
        public void depositThroughTheRepository(long id) {
            repository.deposit(id, 1);
        }

        @Fenced(resource = "accounts", key = "#id", acquire = true)
        public void depositAroundTheRepository(long id) {
            writtenAroundTheFence.merge(id, 1L, Long::sum); // the trial's plain JdbcTemplate write
        }

        public Map<Long, Long> writtenAroundTheFence() {
            return writtenAroundTheFence;
        }

        @Transactional
        public void bothInOneTransaction(long id, Accounts self) {
            self.depositAroundTheRepository(id);
            self.depositThroughTheRepository(id);
        }

        @Transactional
        public void aroundTwiceInOneTransaction(long id, Accounts self) {
            self.depositAroundTheRepository(id);
            self.depositAroundTheRepository(id);
        }
    }

    @Configuration
    @EnableFencing
    @EnableTransactionManagement
    static class Config {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        InMemoryTokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        PlatformTransactionManager transactionManager() {
            return new TransactionOrderTest.NoResourceTransactionManager();
        }

        @Bean
        Fixtures.MapAccountRepository accountRepository() {
            return new Fixtures.MapAccountRepository();
        }

        @Bean
        Accounts accounts(Fixtures.AccountRepository repository) {
            Accounts accounts = new Accounts();
            accounts.repository = repository;
            return accounts;
        }
    }

    private AnnotationConfigApplicationContext context;
    private Accounts accounts;

    @BeforeEach
    void start() {
        context = new AnnotationConfigApplicationContext(Config.class);
        accounts = context.getBean(Accounts.class);
    }

    @AfterEach
    void stop() {
        context.close();
    }

    private double unchecked() {
        return context.getBean(MeterRegistry.class).get(FencingMetrics.UNCHECKED_LEASES).tag("resource", "accounts")
                .counter().count();
    }

    @Test
    void aWriteAroundTheFencedRepositoryIsCounted() {
        accounts.depositAroundTheRepository(1);
        accounts.depositAroundTheRepository(1);
        // the calls ran: the library cannot stop them
        assertThat(accounts.writtenAroundTheFence()).containsEntry(1L, 2L);
        assertThat(unchecked()).isEqualTo(2);
    }

    @Test
    void aWriteThroughTheFencedRepositoryIsNot() {
        accounts.depositThroughTheRepository(2);
        assertThat(context.getBean(Fixtures.AccountRepository.class).balance(2)).isEqualTo(1);
        assertThat(unchecked()).isZero();
    }

    static class ReadsUnderTheLock {
        @Fenced(resource = "accounts", key = "#id", acquire = true, reportUnchecked = false)
        public long balance(long id) {
            return 0;
        }
    }

    @Test
    void anAcquiringMethodThatOnlyReadsOptsOut() {
        try (var reads = new AnnotationConfigApplicationContext()) {
            reads.register(Config.class);
            reads.registerBean(ReadsUnderTheLock.class);
            reads.refresh();
            reads.getBean(ReadsUnderTheLock.class).balance(5);
            assertThat(reads.getBean(MeterRegistry.class).get(FencingMetrics.UNCHECKED_LEASES)
                    .tag("resource", "accounts").counter().count()).isZero();
        }
    }

    static class MisplacedOptOut {
        @Fenced(resource = "accounts", key = "#id", reportUnchecked = false)
        public void deposit(long id) {
        }
    }

    @Test
    void anOptOutOnAMethodThatDoesNotAcquireFailsStartup() {
        var misplaced = new AnnotationConfigApplicationContext();
        misplaced.register(Config.class);
        misplaced.registerBean(MisplacedOptOut.class);
        assertThatThrownBy(misplaced::refresh).hasStackTraceContaining("MisplacedOptOut.deposit(long)")
                .hasStackTraceContaining("reportUnchecked = false");
        misplaced.close();
    }

    @Test
    void inOneTransactionTheHeldLocksCheckCountsForEveryCallThatReusedIt() {
        accounts.bothInOneTransaction(3, accounts);
        assertThat(unchecked()).isZero();

        accounts.aroundTwiceInOneTransaction(4, accounts);
        assertThat(unchecked()).as("one lock held to the commit, one report").isEqualTo(1);
    }
}

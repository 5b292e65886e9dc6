package dev.fencing.spring;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.testsupport.LogRecords;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A lock taken by {@code @Fenced(acquire = true)} inside a Spring transaction is held until the transaction has
 * completed: given back before the commit, the next holder could read the data without this holder's uncommitted
 * writes and overwrite them with a larger token, a lost update no fence can see. Within the transaction a second
 * acquiring call for the same resource reuses the held lock instead of waiting for itself.
 */
class LockHeldUntilCommitTest {

    static class Transfers {
        final List<FencingToken> tokens = new CopyOnWriteArrayList<>();
        final List<Boolean> lockFreeBeforeCommit = new CopyOnWriteArrayList<>();
        TokenIssuer issuer;

        @Transactional
        @Fenced(resource = "accounts", key = "#id", acquire = true)
        public void transfer(long id) {
            tokens.add(FencingContext.current("accounts:" + id));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void beforeCommit(boolean readOnly) {
                    // the method has returned and the transaction has not committed: another holder must wait
                    lockFreeBeforeCommit.add(lockFreeElsewhere("accounts:" + id));
                }
            });
        }

        @Fenced(resource = "accounts", key = "#id", acquire = true)
        public void transferWithoutOwnTransaction(long id) {
            tokens.add(FencingContext.current("accounts:" + id));
        }

        @Transactional
        public void twiceInOneTransaction(long id, Transfers self) {
            self.transferWithoutOwnTransaction(id);
            self.transferWithoutOwnTransaction(id);
            lockFreeBeforeCommit.add(lockFreeElsewhere("accounts:" + id));
        }

        /** A resource of its own: the warning below is said once per family in the JVM. */
        @Fenced(resource = "inside", key = "#id", acquire = true)
        public void insideWithoutOwnTransaction(long id) {
        }

        @Transactional
        public void insideCallersTransaction(long id, Transfers self) {
            self.insideWithoutOwnTransaction(id);
        }

        @Transactional(isolation = org.springframework.transaction.annotation.Isolation.READ_COMMITTED)
        public void insideReadCommitted(long id, Transfers self) {
            self.insideWithoutOwnTransaction(id);
        }

        @Transactional
        @Fenced(resource = "accounts", key = "#id", acquire = true)
        public void failingTransfer(long id) {
            throw new IllegalStateException("the write failed");
        }

        public List<FencingToken> tokens() {
            return tokens;
        }

        public List<Boolean> lockFreeBeforeCommit() {
            return lockFreeBeforeCommit;
        }

        /** Whether another thread gets the lock within 100 ms (released at once when it does). */
        public boolean lockFreeElsewhere(String resource) {
            return CompletableFuture.supplyAsync(() -> {
                try (Lease lease = issuer.acquire(resource, Duration.ofMillis(100))) {
                    return lease != null;
                } catch (LockAcquisitionException busy) {
                    return false;
                }
            }).orTimeout(10, TimeUnit.SECONDS).join();
        }
    }

    /** Records whether a transaction was active when a lock was taken and when it was given back. */
    static final class RecordingIssuer implements TokenIssuer {
        final TokenIssuer delegate;
        final List<String> events = new CopyOnWriteArrayList<>();

        RecordingIssuer(TokenIssuer delegate) {
            this.delegate = delegate;
        }

        private String state() {
            return TransactionSynchronizationManager.isActualTransactionActive() ? "in transaction" : "outside";
        }

        @Override
        public Lease acquire(String resource, Duration timeout) {
            events.add("acquire " + state());
            Lease lease = delegate.acquire(resource, timeout);
            return new Lease() {
                @Override
                public FencingToken token() {
                    return lease.token();
                }

                @Override
                public boolean isLost() {
                    return lease.isLost();
                }

                @Override
                public boolean isReleased() {
                    return lease.isReleased();
                }

                @Override
                public void close() {
                    events.add("release " + state());
                    lease.close();
                }
            };
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
        RecordingIssuer tokenIssuer() {
            return new RecordingIssuer(new InMemoryTokenIssuer());
        }

        /** The recording issuer wraps this JVM's locks, which the in-memory store's check cannot see: one instance. */
        @Bean
        FencingConfigurer oneInstance() {
            return new FencingConfigurer() {
                @Override
                public Boolean singleInstance() {
                    return true;
                }
            };
        }

        @Bean
        PlatformTransactionManager transactionManager() {
            return new TransactionOrderTest.NoResourceTransactionManager();
        }

        @Bean
        Transfers transfers(RecordingIssuer issuer) {
            Transfers transfers = new Transfers();
            transfers.issuer = issuer.delegate; // the lock itself, unrecorded
            return transfers;
        }
    }

    @Test
    void aTransactionalAcquiringMethodTakesTheLockBeforeItsTransactionAndGivesItBackAfter() {
        try (var ctx = new AnnotationConfigApplicationContext(Config.class)) {
            ctx.getBean(Transfers.class).transfer(5);
            assertThat(ctx.getBean(RecordingIssuer.class).events)
                    .as("a lease issuer on the application's database never needs a second connection")
                    .containsExactly("acquire outside", "release outside");
        }
    }

    @Test
    void theLockIsHeldUntilTheTransactionCommitsAndFreeAfter() {
        try (var ctx = new AnnotationConfigApplicationContext(Config.class)) {
            Transfers transfers = ctx.getBean(Transfers.class);
            transfers.transfer(1);
            assertThat(transfers.lockFreeBeforeCommit()).containsExactly(false);
            assertThat(transfers.lockFreeElsewhere("accounts:1")).as("released after the commit").isTrue();
            assertThat(FencingContext.isEmpty()).isTrue();
        }
    }

    @Test
    void aSecondAcquireInTheSameTransactionReusesTheHeldLock() {
        try (var ctx = new AnnotationConfigApplicationContext(Config.class)) {
            Transfers transfers = ctx.getBean(Transfers.class);
            transfers.twiceInOneTransaction(2, transfers);
            assertThat(transfers.tokens()).hasSize(2);
            assertThat(transfers.tokens().get(1)).as("the same lock, not a second acquisition")
                    .isEqualTo(transfers.tokens().get(0));
            assertThat(transfers.lockFreeBeforeCommit()).containsExactly(false);
            assertThat(transfers.lockFreeElsewhere("accounts:2")).isTrue();
        }
    }

    /**
     * A lock taken inside a transaction that was already active may serve reads from a snapshot older than the
     * previous holder's commit (REPEATABLE READ): a trial lost an update that way with no signal. Warned of once per
     * resource family; not for a lock taken before the transaction, nor in a READ COMMITTED one.
     */
    @Test
    void aLockTakenInsideACallersTransactionIsWarnedOfOncePerFamily() {
        try (var ctx = new AnnotationConfigApplicationContext(Config.class);
             LogRecords log = LogRecords.of("dev.fencing.spring.support")) {
            Transfers transfers = ctx.getBean(Transfers.class);
            transfers.insideWithoutOwnTransaction(7);
            transfers.insideReadCommitted(8, transfers);
            assertThat(log.records()).noneMatch(r -> r.getMessage().contains("inside a transaction"));
            transfers.insideCallersTransaction(9, transfers);
            transfers.insideCallersTransaction(10, transfers);
            assertThat(log.records()).filteredOn(r -> r.getMessage().contains("inside a transaction"))
                    .singleElement().satisfies(r -> {
                        assertThat(r.getLevel()).isEqualTo(java.util.logging.Level.WARNING);
                        assertThat(r.getMessage()).contains("'inside:9'", "snapshot", "READ_COMMITTED",
                                "outermost @Transactional method the acquiring one");
                    });
        }
    }

    @Test
    void aRolledBackTransactionReleasesTheLockToo() {
        try (var ctx = new AnnotationConfigApplicationContext(Config.class)) {
            Transfers transfers = ctx.getBean(Transfers.class);
            assertThatThrownBy(() -> transfers.failingTransfer(3)).hasMessage("the write failed");
            assertThat(transfers.lockFreeElsewhere("accounts:3")).isTrue();
        }
    }

    @Test
    void outsideATransactionTheLockIsReleasedAsTheCallReturns() {
        try (var ctx = new AnnotationConfigApplicationContext(Config.class)) {
            Transfers transfers = ctx.getBean(Transfers.class);
            transfers.transferWithoutOwnTransaction(4);
            assertThat(transfers.lockFreeElsewhere("accounts:4")).isTrue();
            // and a programmatic transaction around the call holds it just the same
            TransactionTemplate template = new TransactionTemplate(ctx.getBean(PlatformTransactionManager.class));
            template.executeWithoutResult(status -> {
                transfers.transferWithoutOwnTransaction(4);
                assertThat(transfers.lockFreeElsewhere("accounts:4")).isFalse();
            });
            assertThat(transfers.lockFreeElsewhere("accounts:4")).isTrue();
        }
    }
}

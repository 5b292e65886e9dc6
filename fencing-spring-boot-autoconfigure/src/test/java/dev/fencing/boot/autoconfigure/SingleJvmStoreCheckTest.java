package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An in-memory fence store beside a lock service other processes share: each instance checked its writes against its
 * own max_seen, so in a new user's two-instance trial a paused instance's write landed after the other's newer one,
 * with only a warning at startup. Such a pair now fails startup unless the application says it runs as one instance.
 */
@Timeout(60)
class SingleJvmStoreCheckTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class));

    /** Stands for an issuer of a shared lock service (ZooKeeper, etcd, the JDBC lease): not one of this JVM. */
    static final class SharedLocks implements TokenIssuer {
        @Override
        public Lease acquire(String resource, Duration timeout) {
            throw new UnsupportedOperationException("not acquired in these tests");
        }
    }

    @Test
    void theStartersInMemoryStoreBesideASharedLockServiceFailsStartup() {
        runner.withPropertyValues("fencing.store.type=in-memory").withBean("locks", TokenIssuer.class, SharedLocks::new)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).isInstanceOf(FencingConfigurationException.class)
                            .hasMessageContaining("fencing.store.type=in-memory (its InMemoryFenceStore 'fenceStore')")
                            .hasMessageContaining("the TokenIssuer bean 'locks' (" + SharedLocks.class.getName() + ")")
                            .hasMessageContaining("fencing.store.type=jdbc")
                            .hasMessageContaining("fencing.store.in-memory.single-instance=true");
                });
    }

    @Test
    void theApplicationsInMemoryStoreBesideASharedLockServiceBehindAnOffsetFailsStartup() {
        runner.withBean("ledgerFence", FenceStore.class, InMemoryFenceStore::new)
                .withBean("locks", TokenIssuer.class, () -> OffsetTokenIssuer.of(new SharedLocks(), 1000))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).isInstanceOf(FencingConfigurationException.class)
                            .hasMessageContaining("the application's InMemoryFenceStore bean 'ledgerFence'")
                            .hasMessageContaining("(" + SharedLocks.class.getName() + ")");
                });
    }

    @Test
    void oneInstanceSaidStarts() {
        runner.withPropertyValues("fencing.store.type=in-memory", "fencing.store.in-memory.single-instance=true")
                .withBean(TokenIssuer.class, SharedLocks::new)
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void besideThisJvmsOwnLocksOrNoneItStarts() {
        runner.withPropertyValues("fencing.store.type=in-memory").withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .run(context -> assertThat(context).hasNotFailed());
        runner.withPropertyValues("fencing.store.type=in-memory")
                .withBean(TokenIssuer.class, () -> OffsetTokenIssuer.of(new InMemoryTokenIssuer(), 5))
                .run(context -> assertThat(context).hasNotFailed());
        runner.withPropertyValues("fencing.store.type=in-memory").run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void aSharedStoreBesideASharedLockServiceStarts() {
        FenceStore shared = new FenceStore() { // stands for a JdbcFenceStore
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
                return write.proceed();
            }
        };
        runner.withBean(FenceStore.class, () -> shared).withBean(TokenIssuer.class, SharedLocks::new)
                .run(context -> assertThat(context).hasNotFailed());
    }
}

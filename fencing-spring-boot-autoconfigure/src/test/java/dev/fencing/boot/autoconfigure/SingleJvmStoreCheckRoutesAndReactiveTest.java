package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.reactive.ReactiveTokenIssuer;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The other paths to an in-memory store beside a shared lock service (a re-trial's): a route of a RoutingFenceStore,
 * a reactive-only application, the property as an environment variable.
 */
@Timeout(60)
class SingleJvmStoreCheckRoutesAndReactiveTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class));

    static final class SharedReactiveLocks implements ReactiveTokenIssuer {
        @Override
        public Mono<Lease> acquire(String resource, Duration timeout) {
            return Mono.error(new UnsupportedOperationException("not acquired in these tests"));
        }

        @Override
        public Mono<Void> release(Lease lease) {
            return Mono.empty();
        }
    }

    static final FenceStore SHARED = new FenceStore() { // stands for a JdbcFenceStore
        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
            return write.proceed();
        }
    };

    /** HOLE: an InMemoryFenceStore behind a RoutingFenceStore route, beside a shared lock service. */
    @Test
    void anInMemoryStoreBehindARouteBesideASharedLockServiceFailsStartup() {
        runner.withBean("fenceStore", FenceStore.class, () -> RoutingFenceStore.builder()
                        .route("ledger", new InMemoryFenceStore()).fallback(SHARED).build())
                .withBean("locks", TokenIssuer.class, SingleJvmStoreCheckTest.SharedLocks::new)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).isInstanceOf(FencingConfigurationException.class)
                            .hasMessageContaining("InMemoryFenceStore");
                });
    }

    /** HOLE: a reactive-only application, its InMemoryReactiveFenceStore beside a ReactiveTokenIssuer bean. */
    @Test
    void aReactiveInMemoryStoreBesideASharedReactiveIssuerFailsStartup() {
        runner.withBean("reactiveFenceStore", ReactiveFenceStore.class, InMemoryReactiveFenceStore::new)
                .withBean("reactiveLocks", ReactiveTokenIssuer.class, SharedReactiveLocks::new)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).isInstanceOf(FencingConfigurationException.class)
                            .hasMessageContaining("InMemoryReactiveFenceStore");
                });
    }

    /** Same, with the reactive issuer adapted from a blocking issuer of a shared service, declared as the bean. */
    @Test
    void aReactiveInMemoryStoreBesideAnAdaptedSharedIssuerFailsStartup() {
        runner.withBean("reactiveFenceStore", ReactiveFenceStore.class, InMemoryReactiveFenceStore::new)
                .withBean("reactiveLocks", ReactiveTokenIssuer.class,
                        () -> ReactiveTokenIssuer.fromBlocking(new SingleJvmStoreCheckTest.SharedLocks()))
                .run(context -> assertThat(context).hasFailed());
    }

    /** A lazy in-memory store bean declared as FenceStore. */
    @Test
    void aLazyInMemoryStoreBesideASharedLockServiceFailsStartup() {
        runner.withBean("fenceStore", FenceStore.class, InMemoryFenceStore::new, bd -> bd.setLazyInit(true))
                .withBean("locks", TokenIssuer.class, SingleJvmStoreCheckTest.SharedLocks::new)
                .run(context -> assertThat(context).hasFailed());
    }

    /** False refusal? The property from the environment variable Boot documents for it. */
    @Test
    void theEnvironmentVariableSaysOneInstance() {
        runner.withPropertyValues("fencing.store.type=in-memory")
                .withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
                        new SystemEnvironmentPropertySource("test-systemEnvironment",
                                Map.of("FENCING_STORE_INMEMORY_SINGLEINSTANCE", "true"))))
                .withBean(TokenIssuer.class, SingleJvmStoreCheckTest.SharedLocks::new)
                .run(context -> assertThat(context).hasNotFailed());
    }

    /** No false refusal: a reactive issuer adapted from this JVM's own locks, beside the reactive in-memory store. */
    @Test
    void aReactiveInMemoryStoreBesideThisJvmsAdaptedLocksStarts() {
        runner.withBean("reactiveFenceStore", ReactiveFenceStore.class, InMemoryReactiveFenceStore::new)
                .withBean("reactiveLocks", ReactiveTokenIssuer.class,
                        () -> ReactiveTokenIssuer.fromBlocking(new dev.fencing.issuer.InMemoryTokenIssuer()))
                .run(context -> assertThat(context).hasNotFailed());
    }
}

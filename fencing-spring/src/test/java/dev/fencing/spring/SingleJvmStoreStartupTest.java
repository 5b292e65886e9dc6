package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.ReactiveTokenIssuer;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An in-memory fence store beside a token issuer of a lock service other processes share, with plain
 * {@code @EnableFencing} (no Spring Boot): two instances of the application would each check their writes against
 * their own max_seen, so a paused instance's write lands after the other's newer one. The starter refuses the pair at
 * startup; so must {@code @EnableFencing}, unless the application says it runs as one instance.
 */
@Timeout(60)
class SingleJvmStoreStartupTest {

    /** Stands for an issuer of a shared lock service (ZooKeeper, etcd, the JDBC lease): not one of this JVM. */
    static final class SharedLocks implements TokenIssuer {
        @Override
        public Lease acquire(String resource, Duration timeout) {
            throw new UnsupportedOperationException("not acquired in these tests");
        }
    }

    /** A fenced ledger, its fence store in this JVM, and the locks of a shared service. */
    @Configuration
    @EnableFencing
    static class InMemoryStoreBesideSharedLocks {
        @Bean
        Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }

        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        TokenIssuer locks() {
            return new SharedLocks();
        }
    }

    @Configuration
    @EnableFencing
    static class InMemoryStoreBesideOffsetSharedLocks {
        @Bean
        FenceStore ledgerFence() {
            return new InMemoryFenceStore();
        }

        @Bean
        TokenIssuer locks() {
            return OffsetTokenIssuer.of(new SharedLocks(), 1000);
        }
    }

    @Configuration
    @EnableFencing
    static class RoutedInMemoryStoreBesideSharedLocks {
        @Bean
        FenceStore fenceStore() {
            return RoutingFenceStore.builder().route("ledger", new InMemoryFenceStore()).fallback(SHARED).build();
        }

        @Bean
        TokenIssuer locks() {
            return new SharedLocks();
        }
    }

    @Configuration
    @EnableFencing
    static class ReactiveInMemoryStoreBesideSharedLocks {
        @Bean
        InMemoryReactiveFenceStore reactiveFenceStore() {
            return new InMemoryReactiveFenceStore();
        }

        @Bean
        ReactiveTokenIssuer reactiveLocks() {
            return ReactiveTokenIssuer.fromBlocking(new SharedLocks());
        }
    }

    /** No store bean: {@code allowInMemoryStore} falls back to an in-memory store, beside the shared locks. */
    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class FallbackStoreBesideSharedLocks {
        @Bean
        Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }

        @Bean
        TokenIssuer locks() {
            return new SharedLocks();
        }
    }

    @Configuration
    @EnableFencing
    static class InMemoryStoreBesideOwnLocks {
        @Bean
        Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }

        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        TokenIssuer locks() {
            return OffsetTokenIssuer.of(new InMemoryTokenIssuer(), 5);
        }
    }

    @Configuration
    @EnableFencing
    static class SharedStoreBesideSharedLocks {
        @Bean
        FenceStore fenceStore() {
            return SHARED;
        }

        @Bean
        TokenIssuer locks() {
            return new SharedLocks();
        }
    }

    static final FenceStore SHARED = new FenceStore() { // stands for a JdbcFenceStore
        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
            return write.proceed();
        }
    };

    @Test
    void anInMemoryStoreBesideASharedLockServiceFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(InMemoryStoreBesideSharedLocks.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("the application's InMemoryFenceStore bean 'fenceStore'")
                .hasMessageContaining("the TokenIssuer bean 'locks' (" + SharedLocks.class.getName() + ")")
                .hasMessageContaining("JdbcFenceStore")
                .hasMessageContaining("the Environment property fencing.store.in-memory.single-instance=true")
                .hasMessageContaining("a FencingConfigurer bean whose singleInstance() returns Boolean.TRUE");
    }

    @Test
    void anInMemoryStoreBesideASharedLockServiceBehindAnOffsetFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(InMemoryStoreBesideOffsetSharedLocks.class)
                .close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("the application's InMemoryFenceStore bean 'ledgerFence'")
                .hasMessageContaining("(" + SharedLocks.class.getName() + ")");
    }

    @Test
    void anInMemoryStoreBehindARouteBesideASharedLockServiceFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(RoutedInMemoryStoreBesideSharedLocks.class)
                .close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("the InMemoryFenceStore the RoutingFenceStore bean 'fenceStore' routes to");
    }

    @Test
    void aReactiveInMemoryStoreBesideASharedReactiveIssuerFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(ReactiveInMemoryStoreBesideSharedLocks.class)
                .close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("InMemoryReactiveFenceStore bean 'reactiveFenceStore'")
                .hasMessageContaining("R2dbcFenceStore");
    }

    @Test
    void theAllowedInMemoryFallbackBesideASharedLockServiceFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(FallbackStoreBesideSharedLocks.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("@EnableFencing(allowInMemoryStore = true)")
                .hasMessageContaining("the TokenIssuer bean 'locks'");
    }

    @Test
    void oneInstanceSaidByTheEnvironmentStarts() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test",
                    Map.of("fencing.store.in-memory.single-instance", "true")));
            context.register(InMemoryStoreBesideSharedLocks.class);
            context.refresh();
            assertThat(context.getBean(Fixtures.Ledger.class)).isNotNull();
        }
    }

    @Test
    void oneInstanceSaidByAConfigurerStarts() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.registerBean("oneInstance", FencingConfigurer.class, () -> new FencingConfigurer() {
                @Override
                public Boolean singleInstance() {
                    return true;
                }
            });
            context.register(InMemoryStoreBesideSharedLocks.class);
            context.refresh();
            assertThat(context.getBean(Fixtures.Ledger.class)).isNotNull();
        }
    }

    @Test
    void besideThisJvmsOwnLocksOrASharedStoreItStarts() {
        new AnnotationConfigApplicationContext(InMemoryStoreBesideOwnLocks.class).close();
        new AnnotationConfigApplicationContext(SharedStoreBesideSharedLocks.class).close();
    }
}

package dev.fencing.integration;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.RemoteTokenSetAsideException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A consumer thread running under a caller's (remote) token for orders:42, as the HTTP filter and the AMQP listener
 * advice bind it, asks the registry for the lock on 42: refused with {@link RemoteTokenSetAsideException}, as an
 * acquiring {@code @Fenced} method is, before any lease is taken. A review found the lock taken with a fresh lease
 * instead, and a zombie's late request written under it over the newer holder's write.
 */
@Timeout(30)
class RemoteTokenUnderLockTest {

    private final AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(App.class);

    @AfterEach
    void close() {
        context.close();
    }

    @Test
    void aLockTakenUnderACallersTokenForItsResourceIsRefusedLikeAnAcquiringMethod() throws Exception {
        Orders orders = context.getBean(Orders.class);
        FencedLockRegistry registry = context.getBean(FencedLockRegistry.class);
        // the zombie held the lock with this token and sent its request, which arrives late
        FencedLock lock = registry.obtain(42L);
        lock.lock();
        FencingToken zombie = lock.token();
        lock.unlock();
        // the next holder locks and writes
        lock.lock();
        try {
            orders.save(42, "second holder");
        } finally {
            lock.unlock();
        }

        try (FencingScope received = FencingContext.bindRemote(List.of(zombie))) {
            assertThatThrownBy(() -> orders.saveAcquiring(42, "zombie via acquire"))
                    .isInstanceOf(RemoteTokenSetAsideException.class);
            assertThatThrownBy(() -> registry.executeLocked(42L, () -> orders.save(42, "zombie via registry lock")))
                    .isInstanceOfSatisfying(RemoteTokenSetAsideException.class, e -> {
                        assertThat(e.resource()).isEqualTo("orders:42");
                        assertThat(e.presentedValue()).isEqualTo(zombie.value());
                        assertThat(e).hasMessageContaining("FencedLockRegistry").hasMessageContaining("orders:42");
                    });
            assertThatThrownBy(lock::lock).isInstanceOf(RemoteTokenSetAsideException.class);
            assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(RemoteTokenSetAsideException.class);
            assertThatThrownBy(lock::tryLock).isInstanceOf(RemoteTokenSetAsideException.class);
            assertThatThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS))
                    .isInstanceOf(RemoteTokenSetAsideException.class);
            // another resource's lock is not the caller's token's business
            FencedLock other = registry.obtain(43L);
            assertThat(other.tryLock()).isTrue();
            other.unlock();
        }
        assertThat(orders.value(42)).isEqualTo("second holder");
        // nothing was taken: another thread gets the lock at once
        assertThat(CompletableFuture.supplyAsync(() -> {
            boolean locked = lock.tryLock();
            if (locked) {
                lock.unlock();
            }
            return locked;
        }).get(10, TimeUnit.SECONDS)).isTrue();
        // and with the caller's token gone, this thread takes it as before
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    static class Orders {
        private final Map<Long, String> rows = new ConcurrentHashMap<>();

        @Fenced(resource = "orders", key = "#id")
        public void save(long id, String value) {
            rows.put(id, value);
        }

        @Fenced(resource = "orders", key = "#id", acquire = true)
        public void saveAcquiring(long id, String value) {
            rows.put(id, value);
        }

        String value(long id) {
            return rows.get(id);
        }
    }

    @Configuration
    @EnableFencing
    static class App {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        InMemoryTokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer(Duration.ofSeconds(10), 0);
        }

        @Bean
        FencedLockRegistry lockRegistry(TokenIssuer tokenIssuer) {
            return new FencedLockRegistry(tokenIssuer, "orders:");
        }

        @Bean
        Orders orders() {
            return new Orders();
        }
    }
}

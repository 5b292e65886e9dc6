package dev.fencing.integration;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.StaleTokenException;
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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A {@code @Fenced} repository (fencing-spring, Spring proxies) called under {@code registry.obtain(key).lock()}:
 * the lock's bound token is what the repository checks, so a holder whose lease ran out and was taken over is refused
 * once the next holder has written. The same calls on the unproxied repository (the fence off) let the stale write
 * land.
 */
@Timeout(30)
class FencedRepositoryTest {

    private final AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(App.class);
    private final ExecutorService otherProcess = Executors.newSingleThreadExecutor();

    @AfterEach
    void close() throws InterruptedException {
        otherProcess.shutdownNow();
        assertThat(otherProcess.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
        context.close();
    }

    @Test
    void aStaleHolderIsRefusedByTheFencedRepository() throws Exception {
        Orders orders = context.getBean(Orders.class);
        Orders unfenced = new Orders();
        assertThat(zombieRace(orders)).isInstanceOf(StaleTokenException.class).hasMessageContaining("orders:42");
        assertThat(orders.value(42)).isEqualTo("second holder");

        assertThat(zombieRace(unfenced)).as("the fence off: the stale write is not refused").isNull();
        assertThat(unfenced.value(42)).as("and overwrote the second holder's").isEqualTo("stale");
    }

    @Test
    void withoutTheLockTheRepositoryRefusesForLackOfAToken() {
        assertThatThrownBy(() -> context.getBean(Orders.class).save(7, "x")).isInstanceOf(MissingTokenException.class);
    }

    /** Holder 1 writes, pauses past its lease, holder 2 (another registry) locks and writes, holder 1 writes again. */
    private Throwable zombieRace(Orders orders) throws Exception {
        TokenIssuer issuer = context.getBean(TokenIssuer.class);
        FencedLockRegistry first = context.getBean(FencedLockRegistry.class);
        FencedLockRegistry second = new FencedLockRegistry(issuer, "orders:");
        FencedLock lock = first.obtain(42L);
        lock.lock();
        try {
            orders.save(42, "first holder");
            FencingToken mine = lock.token();
            FencingToken theirs = CompletableFuture.supplyAsync(() -> {
                FencedLock other = second.obtain(42L);
                other.lock(); // granted once the first holder's 300 ms lease has run out
                try {
                    orders.save(42, "second holder");
                    return other.token();
                } finally {
                    other.unlock();
                }
            }, otherProcess).get(10, TimeUnit.SECONDS);
            assertThat(theirs.value()).isGreaterThan(mine.value());
            try {
                orders.save(42, "stale"); // the first holder wakes, its old token still bound
                return null;
            } catch (StaleTokenException e) {
                return e;
            }
        } finally {
            lock.unlock();
        }
    }

    /** The repository: checks the bound token for {@code orders:<id>} on every write. */
    static class Orders {
        private final Map<Long, String> rows = new ConcurrentHashMap<>();

        @Fenced(resource = "orders", key = "#id")
        public void save(long id, String value) {
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
            return new InMemoryTokenIssuer(Duration.ofMillis(300), 0);
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

package dev.fencing.guard;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingPropagation;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A check that presents the token of a lock this process knows is lost is refused as stale before the store sees it:
 * the zombie's own process refuses its write even while no newer holder has written, and whatever tokens the lock
 * service hands out next (a trial's ensemble that lost its data issued lower ones, and the zombie's higher token was
 * accepted after theirs).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LostLockTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofMillis(100), 0);
    private final FenceGuard guard = new FenceGuard(store, issuer, Duration.ofSeconds(5));
    private final FencePoint service = new FencePoint("Service.transfer()", "ledger", null, null, true, metrics);
    private final FencePoint repository = new FencePoint("Repo.append()", "ledger", null, null, false, metrics);
    private final List<String> written = new ArrayList<>();
    private final ExecutorService pool = Executors.newSingleThreadExecutor();

    @AfterEach
    void cleanUp() {
        pool.shutdownNow();
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private Object write(String entry) throws Throwable {
        return guard.invoke(repository, new Object[0], () -> written.add(entry));
    }

    private double stale() {
        var counter = registry.find(FencingMetrics.CHECKS).tag("outcome", "stale").counter();
        return counter == null ? 0 : counter.count();
    }

    private static void outlive(Duration ttl) throws InterruptedException {
        Thread.sleep(ttl.toMillis() + 50);
    }

    @Test
    void aWriteAfterTheLeaseRanOutIsRefusedBeforeTheStoreAndCountedStale() throws Throwable {
        Throwable[] refused = new Throwable[1];
        guard.invoke(service, new Object[0], () -> {
            write("under the lock");
            outlive(Duration.ofMillis(100));         // the lease is lost: another holder may take the lock now
            try {
                write("after the lease ran out");
            } catch (StaleTokenException e) {
                refused[0] = e;
            }
            return null;
        });
        assertThat(refused[0]).isInstanceOf(StaleTokenException.class);
        StaleTokenException lost = (StaleTokenException) refused[0];
        assertThat(lost.lockLost()).isTrue();
        assertThat(lost.operation()).isEqualTo("Repo.append()");
        assertThat(lost.maxSeen()).isEqualTo(dev.fencing.rule.ForgedTokenException.NOT_CONSULTED);
        assertThat(lost.getMessage()).contains("whose lock this process knows is lost", "'ledger'", "Repo.append()");
        assertThat(written).containsExactly("under the lock");
        assertThat(store.maxSeen("ledger")).hasValue(lost.presented().value());
        assertThat(stale()).isEqualTo(1);
    }

    /**
     * The lock service hands the lock to another holder with a token the store has not seen yet: the zombie's token
     * equals max_seen with its own holder, which the store accepts as a retry; its process refuses it.
     */
    @Test
    void theZombiesOwnProcessRefusesItBeforeTheNewHolderHasWritten() throws Throwable {
        Throwable[] refused = new Throwable[1];
        guard.invoke(service, new Object[0], () -> {
            write("first");
            outlive(Duration.ofMillis(100));
            try (Lease other = pool.submit(() -> issuer.acquire("ledger", Duration.ofSeconds(5)))
                    .get(5, TimeUnit.SECONDS)) {
                assertThat(other.token().value()).isGreaterThan(store.maxSeen("ledger").orElseThrow());
                try {
                    write("zombie");
                } catch (StaleTokenException e) {
                    refused[0] = e;
                }
            }
            return null;
        });
        assertThat(refused[0]).isInstanceOf(StaleTokenException.class);
        assertThat(written).containsExactly("first");
    }

    @Test
    void theLossTravelsWithTheTokenToAnotherThread() throws Throwable {
        Object result = guard.invoke(service, new Object[0], () -> {
            outlive(Duration.ofMillis(100));
            return pool.submit(FencingPropagation.callable(() -> {
                try {
                    return write("on another thread");
                } catch (StaleTokenException e) {
                    return e;
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
            })).get(5, TimeUnit.SECONDS);
        });
        assertThat(result).isInstanceOfSatisfying(StaleTokenException.class, e -> assertThat(e.lockLost()).isTrue());
        assertThat(written).isEmpty();
        assertThat(store.maxSeen("ledger")).isEmpty();
    }

    /**
     * Work the acquiring call handed to another thread and did not wait for (a fire-and-forget {@code @Async} method)
     * writes after the call returned and gave the lock back: the lock is no longer held, so the check is refused
     * before the store, as for a lost lock, instead of being accepted outside the lock.
     */
    @Test
    void aWriteAfterTheAcquiringCallGaveTheLockBackIsRefusedBeforeTheStore() throws Throwable {
        java.util.concurrent.CountDownLatch returned = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.Future<?>[] task = new java.util.concurrent.Future<?>[1];
        guard.invoke(service, new Object[0], () -> {
            task[0] = pool.submit(FencingPropagation.callable(() -> {
                returned.await(5, TimeUnit.SECONDS);
                try {
                    return write("after the lock was given back");
                } catch (StaleTokenException e) {
                    return e;
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
            }));
            return null;
        });
        returned.countDown();
        Object result = task[0].get(5, TimeUnit.SECONDS);
        assertThat(result).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.lockLost()).isTrue();
            assertThat(e.getMessage()).contains("given back");
        });
        assertThat(written).isEmpty();
        assertThat(store.maxSeen("ledger")).isEmpty();
        assertThat(stale()).isEqualTo(1);
    }

    /** A check of the application's own reads the token with FencingContext.present: refused too. */
    @Test
    void aCheckOfYourOwnIsRefusedTooAndAHeldLockIsNot() throws Throwable {
        guard.invoke(service, new Object[0], () -> {
            assertThat(FencingContext.present("ledger")).isNotNull(); // held: presented as always
            outlive(Duration.ofMillis(100));
            assertThatThrownBy(() -> FencingContext.present("ledger")).isInstanceOf(StaleTokenException.class)
                    .hasMessageContaining("whose lock this process knows is lost");
            assertThat(FencingContext.current("ledger")).as("a read, not a check").isNotNull();
            return null;
        });
    }
}

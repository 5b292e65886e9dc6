package dev.fencing.shedlock;

import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.InMemoryFenceStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job's token that nothing checked: an acquiring method that ran under it is counted and named like its own
 * unchecked lock, and the once-per-lock-name log line remembers a bounded number of names (lock names made per
 * entity must not grow it forever).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShedLockUncheckedTokenTest {

    private final FakeLockProvider shedlock = new FakeLockProvider();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer(Duration.ofSeconds(30), 0);
    private final FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer).build(); // by name

    private SimpleLock lock(String name) {
        return provider.lock(new LockConfiguration(Instant.now(), name, Duration.ofSeconds(10), Duration.ZERO))
                .orElseThrow();
    }

    @Test
    void anAcquiringMethodThatWritesUncheckedInsideAJobIsCounted() throws Throwable {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FencingMetrics metrics = new FencingMetrics(registry);
        FenceGuard guard = new FenceGuard(new InMemoryFenceStore(), issuer, Duration.ofSeconds(5));
        String name = "nightly-" + UUID.randomUUID();
        FencePoint transfer = new FencePoint("Service.transfer()", name, null, null, true, metrics);

        SimpleLock lock = lock(name);
        try {
            guard.invoke(transfer, new Object[0], () -> "unfenced write"); // runs under the job's token
        } finally {
            lock.unlock();
        }
        Counter counter = registry.find(FencingMetrics.UNCHECKED_LEASES).counter();
        assertThat(counter).isNotNull();
        assertThat(counter.count()).isEqualTo(1);
        assertThat(issuer.highestIssued(name)).as("the job's lock, not one of the method's own").isEqualTo(1);
    }

    @Test
    void theLockNamesRememberedForTheLogAreBounded() {
        OncePerKey once = new OncePerKey(10);
        int logged = 0;
        String last = null;
        for (int i = 0; i < 50; i++) {
            String tail = once.first("invoice-" + i + "\ninvoice-" + i);
            if (tail != null) {
                logged++;
                last = tail;
            }
        }
        assertThat(logged).as("the bound, plus the line that says it was reached").isEqualTo(11);
        assertThat(last).contains("from now on none is");
        assertThat(once.size()).isEqualTo(10);
        assertThat(once.first("invoice-0\ninvoice-0")).as("logged before").isNull();
        assertThat(once.first("invoice-3\ninvoice-3")).isNull();
    }
}

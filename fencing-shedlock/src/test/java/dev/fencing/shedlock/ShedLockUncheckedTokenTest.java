package dev.fencing.shedlock;

import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.testsupport.LogRecords;
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
import java.util.logging.LogRecord;

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

    /**
     * A run whose token nothing checked is counted every time, not only logged once per process (a new user's trial:
     * the alert on fencing.leases.unchecked never fired for a job that wrote around the fence), and the acquisitions
     * are counted under the resource; the line for a lock name without a mapping suggests mapping it.
     */
    @Test
    void everyUncheckedRunIsCountedAndTheAcquisitionsToo() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FencingLockProvider counted = FencingLockProvider.builder(shedlock, issuer)
                .metrics(new FencingMetrics(registry)).resources("nightly", "ledger:eu").build();
        for (int run = 0; run < 3; run++) {
            counted.lock(new LockConfiguration(Instant.now(), "nightly", Duration.ofSeconds(10), Duration.ZERO))
                    .orElseThrow().unlock();
        }
        assertThat(registry.get(FencingMetrics.UNCHECKED_LEASES).tag("resource", "ledger").counter().count())
                .isEqualTo(3);
        assertThat(registry.get(FencingMetrics.ACQUISITIONS).tag("resource", "ledger").tag("outcome", "acquired")
                .counter().count()).isEqualTo(3);

        FencedLock unmapped = (FencedLock) counted.lock(new LockConfiguration(Instant.now(), "report",
                Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
        try {
            assertThat(unmapped.unreportedMessage("report")).contains("map the lock name to it")
                    .contains("resources = \"report=<resource>\"").contains("wait for them before it does");
        } finally {
            unmapped.unlock();
        }
    }

    /**
     * Two lock names nested in one job through ShedLock's executor, sharing a resource: the inner one takes a lease
     * only for the resource the outer one does not hold, and its unchecked run is counted and named for that
     * resource only; the outer token stays bound through the inner run and after it. (The red team's probe; held.)
     */
    @Test
    void nestedLocksOfTwoNamesTakeOnlyTheMissingLeaseAndReportIt() throws Throwable {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FencingLockProvider provider = FencingLockProvider.builder(shedlock, issuer)
                .metrics(new FencingMetrics(registry)).resources("nested-outer", "accounts")
                .resources("nested-inner", "accounts", "ledger").build();
        net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor executor =
                new net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor(provider);
        java.util.concurrent.atomic.AtomicReference<dev.fencing.token.FencingToken> outerToken =
                new java.util.concurrent.atomic.AtomicReference<>();
        java.util.List<LogRecord> records;
        try (LogRecords log = LogRecords.of(FencedLock.class)) {
            executor.executeWithLock((net.javacrumbs.shedlock.core.LockingTaskExecutor.Task) () -> {
                outerToken.set(dev.fencing.context.FencingContext.present("accounts")); // checked
                executor.executeWithLock((net.javacrumbs.shedlock.core.LockingTaskExecutor.Task) () -> {
                    assertThat(dev.fencing.context.FencingContext.present("accounts")).isSameAs(outerToken.get());
                    assertThat(dev.fencing.context.FencingContext.current("ledger")).isNotNull(); // not checked
                }, new LockConfiguration(Instant.now(), "nested-inner", Duration.ofSeconds(10), Duration.ZERO));
                assertThat(dev.fencing.context.FencingContext.current("ledger")).isNull();
                assertThat(dev.fencing.context.FencingContext.current("accounts")).isSameAs(outerToken.get());
            }, new LockConfiguration(Instant.now(), "nested-outer", Duration.ofSeconds(10), Duration.ZERO));
            records = log.records();
        }
        assertThat(dev.fencing.context.FencingContext.isEmpty()).isTrue();
        assertThat(issuer.highestIssued("accounts")).as("one accounts lease").isEqualTo(outerToken.get().value());
        assertThat(registry.get(FencingMetrics.ACQUISITIONS).tag("outcome", "acquired").counters())
                .extracting(c -> c.getId().getTag("resource")).containsExactlyInAnyOrder("accounts", "ledger");
        assertThat(registry.get(FencingMetrics.UNCHECKED_LEASES).tag("resource", "ledger").counter().count())
                .isEqualTo(1);
        assertThat(registry.get(FencingMetrics.UNCHECKED_LEASES).tag("resource", "accounts").counter().count())
                .as("checked in the outer run").isZero();
        assertThat(records).singleElement().extracting(LogRecord::getMessage).asString()
                .contains("lock 'nested-inner'").contains("resource 'ledger'");
    }

    @Test
    void theLockNamesRememberedForTheLogAreBoundedAndEachIsLoggedAgainAfterTheInterval() {
        OncePerKey once = new OncePerKey(10, 600_000);
        int logged = 0;
        String last = null;
        for (int i = 0; i < 50; i++) {
            String tail = once.first("invoice-" + i + "\ninvoice-" + i, 1_000);
            if (tail != null) {
                logged++;
                last = tail;
            }
        }
        assertThat(logged).as("the bound, plus the line that says it was reached").isEqualTo(11);
        assertThat(last).contains("from now on no new one is");
        assertThat(once.size()).isEqualTo(10);
        assertThat(once.first("invoice-0\ninvoice-0", 2_000)).as("logged within the interval").isNull();
        assertThat(once.first("invoice-3\ninvoice-3", 601_000)).as("after the interval").isEmpty();
        once.first("invoice-0\ninvoice-0", 3_000);
        assertThat(once.first("invoice-0\ninvoice-0", 601_000)).as("the runs in between are counted")
                .isEqualTo(" (2 more since the last line, not logged)");
        assertThat(once.first("invoice-3\ninvoice-3", 602_000)).isNull();
        assertThat(once.first("invoice-42\ninvoice-42", 700_000)).as("a new key past the bound").isNull();
    }
}

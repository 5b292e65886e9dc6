package dev.fencing.integration;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.testsupport.LogRecords;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A registry's locks are counted as acquiring methods' are, by resource family: each lock taken, each failure thrown
 * to the caller (a lock that is not free is none), and each holding given back with its token unchecked (also
 * logged, at a pace).
 */
@Timeout(20)
class FencedLockMetricsTest {

    private final MeterRegistry meters = new SimpleMeterRegistry();
    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
    private final FencedLockRegistry registry = new FencedLockRegistry(issuer, "orders:", new FencingMetrics(meters));

    @AfterEach
    void nothingLeftBound() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private double count(String name, String resource, String... tags) {
        var search = meters.find(name).tag("resource", resource).tags(tags);
        var counter = search.counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void aLockIsCountedUnderItsFamilyAndAnUncheckedHoldingIsReportedOnce() {
        String key = "k" + System.nanoTime();
        try (LogRecords logs = LogRecords.of(FencedLock.class)) {
            for (int i = 0; i < 3; i++) {
                FencedLock lock = registry.obtain(key);
                lock.lock();
                lock.unlock();
            }
            assertThat(count(FencingMetrics.ACQUISITIONS, "orders", "outcome", "acquired")).isEqualTo(3);
            assertThat(count(FencingMetrics.UNCHECKED_LEASES, "orders")).isEqualTo(3);
            assertThat(meters.find(FencingMetrics.ACQUISITIONS).tag("resource", "orders:" + key).counter())
                    .as("no key in a tag").isNull();
            assertThat(logs.records()).filteredOn(r -> r.getLevel() == Level.WARNING).singleElement()
                    .satisfies(r -> assertThat(r.getMessage()).contains("FencedLock on resource 'orders:" + key + "'")
                            .contains("no @Fenced check presented it")
                            .contains("fencing.leases.unchecked"));
        }
    }

    @Test
    void aRegistryToldNotToReportCountsItsLocksOnly() {
        FencedLockRegistry leaders = new FencedLockRegistry(issuer, "leader:", new FencingMetrics(meters))
                .reportUnchecked(false);
        try (LogRecords logs = LogRecords.of(FencedLock.class)) {
            FencedLock lock = leaders.obtain("idle" + System.nanoTime());
            lock.lock();
            lock.unlock();
            assertThat(logs.records()).isEmpty();
        }
        assertThat(count(FencingMetrics.ACQUISITIONS, "leader", "outcome", "acquired")).isEqualTo(1);
        assertThat(count(FencingMetrics.UNCHECKED_LEASES, "leader")).isZero();
    }

    @Test
    void aHoldingWhoseTokenACheckPresentedIsNotReported() {
        FencedLock lock = registry.obtain("checked");
        lock.lock();
        try {
            assertThat(FencingContext.present("orders:checked")).isEqualTo(lock.token());
        } finally {
            lock.unlock();
        }
        assertThat(count(FencingMetrics.ACQUISITIONS, "orders", "outcome", "acquired")).isEqualTo(1);
        assertThat(count(FencingMetrics.UNCHECKED_LEASES, "orders")).isZero();
    }

    @Test
    void aTokenHandedToAnotherThreadAndCheckedThereCounts() throws Exception {
        FencedLock lock = registry.obtain("handed");
        lock.lock();
        try {
            var token = lock.token();
            Thread worker = new Thread(() -> {
                try (var ignored = FencingContext.bind(token)) {
                    FencingContext.present("orders:handed");
                }
            });
            worker.start();
            worker.join(5_000);
        } finally {
            lock.unlock();
        }
        assertThat(count(FencingMetrics.UNCHECKED_LEASES, "orders")).isZero();
    }

    @Test
    void aLockHeldElsewhereIsNoFailureButABrokenLockServiceIs() throws Exception {
        Lease theirs = issuer.acquire("orders:busy", Duration.ZERO); // another process's holder
        try {
            assertThat(registry.obtain("busy").tryLock()).isFalse();
            assertThat(registry.obtain("busy").tryLock(50, TimeUnit.MILLISECONDS)).isFalse();
        } finally {
            theirs.close();
        }
        assertThat(meters.find(FencingMetrics.ACQUISITIONS).tag("outcome", "failed").counters()).isEmpty();

        TokenIssuer broken = new TokenIssuer() {
            @Override
            public Lease acquire(String resource, Duration timeout) {
                throw new LockAcquisitionException(resource, "lease table dropped", null, false);
            }
        };
        FencedLockRegistry onBroken = new FencedLockRegistry(broken, "jobs:", new FencingMetrics(meters));
        assertThatThrownBy(() -> onBroken.obtain("1").lock()).isInstanceOf(LockAcquisitionException.class);
        assertThatThrownBy(() -> onBroken.obtain("1").tryLock()).isInstanceOf(LockAcquisitionException.class);
        assertThat(count(FencingMetrics.ACQUISITIONS, "jobs", "outcome", "failed",
                "exception", "LockAcquisitionException")).isEqualTo(2);
    }

    @Test
    void asABeanItCountsInTheContextsRegistryAndACheckedWriteIsNotReported() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(App.class)) {
            FencedLockRegistry beanRegistry = context.getBean(FencedLockRegistry.class);
            Ledger ledger = context.getBean(Ledger.class);
            MeterRegistry contextMeters = context.getBean(MeterRegistry.class);

            FencedLock lock = beanRegistry.obtain("7");
            lock.lock();
            try {
                ledger.write(7);
            } finally {
                lock.unlock();
            }
            FencedLock idle = beanRegistry.obtain("8");
            idle.lock();
            idle.unlock();

            assertThat(contextMeters.get(FencingMetrics.ACQUISITIONS).tag("resource", "ledger")
                    .tag("outcome", "acquired").counter().count()).isEqualTo(2);
            assertThat(contextMeters.get(FencingMetrics.UNCHECKED_LEASES).tag("resource", "ledger").counter().count())
                    .as("the idle holding only").isEqualTo(1);
        }
    }

    @Test
    void twoMeterRegistriesWithNoneOfThemPrimaryFailStartupNamingThem() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(TwoMeterRegistries.class).close())
                .hasRootCauseInstanceOf(org.springframework.beans.factory.NoUniqueBeanDefinitionException.class)
                .hasStackTraceContaining("FencedLockRegistry (prefix 'ledger:') finds 2 MeterRegistry beans")
                .hasStackTraceContaining("first").hasStackTraceContaining("second")
                .hasStackTraceContaining("@Primary");
    }

    @Test
    void withOneOfThemPrimaryItsLocksAreCountedThere() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.register(TwoMeterRegistries.class);
            context.registerBean("third", MeterRegistry.class, SimpleMeterRegistry::new,
                    definition -> definition.setPrimary(true));
            context.refresh();
            FencedLock lock = context.getBean(FencedLockRegistry.class).obtain("9");
            lock.lock();
            lock.unlock();
            assertThat(context.getBean("third", MeterRegistry.class).get(FencingMetrics.ACQUISITIONS)
                    .tag("resource", "ledger").tag("outcome", "acquired").counter().count()).isEqualTo(1);
        }
    }

    @Configuration
    static class TwoMeterRegistries {
        @Bean
        InMemoryTokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        MeterRegistry first() {
            return new SimpleMeterRegistry();
        }

        @Bean
        MeterRegistry second() {
            return new SimpleMeterRegistry();
        }

        @Bean
        FencedLockRegistry lockRegistry(TokenIssuer tokenIssuer) {
            return new FencedLockRegistry(tokenIssuer, "ledger:").reportUnchecked(false);
        }
    }

    static class Ledger {
        @Fenced(resource = "ledger", key = "#id")
        public void write(long id) {
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
            return new InMemoryTokenIssuer();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        FencedLockRegistry lockRegistry(TokenIssuer tokenIssuer) {
            return new FencedLockRegistry(tokenIssuer, "ledger:");
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }
}

package dev.fencing.spring;

import dev.fencing.annotation.Fenced;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.InMemoryFenceStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Through the proxy, a resource in observe mode ({@code @EnableFencing(observe = ...)}) and a write under a lock this
 * process knows is lost: observe mode must report it as the stale write enforce mode refuses (what enforcing would
 * refuse is what the operator reads before switching) and run it outside the store's fence. It was counted
 * {@code accepted} and advanced max_seen with the zombie's token.
 */
@Timeout(60)
class ObservedLostLockWiringTest {

    static class Ledger {
        final List<String> written = new CopyOnWriteArrayList<>();

        public List<String> written() {
            return written;
        }

        @Fenced(resource = "ledger")
        public void append(String line) {
            written.add(line);
        }
    }

    static class Transfers {
        private final Ledger ledger;

        Transfers(Ledger ledger) {
            this.ledger = ledger;
        }

        /** Holds the lock past its lease, then writes: a zombie its own process knows about. */
        @Fenced(resource = "ledger", acquire = true)
        public void late(String line) throws InterruptedException {
            Thread.sleep(200);
            ledger.append(line);
        }
    }

    @Configuration
    @EnableFencing(observe = "ledger")
    static class Config {
        @Bean
        Ledger ledger() {
            return new Ledger();
        }

        @Bean
        Transfers transfers(Ledger ledger) {
            return new Transfers(ledger);
        }

        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        InMemoryTokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer(Duration.ofMillis(100), 0);
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @Test
    void aWriteUnderALostLockIsObservedAsStaleAndRunsOutsideTheFence() throws Exception {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Config.class)) {
            context.getBean(Transfers.class).late("zombie");
            assertThat(context.getBean(Ledger.class).written()).as("observe mode lets it run")
                    .containsExactly("zombie");
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            Counter stale = registry.find(FencingMetrics.CHECKS).tag("outcome", "stale")
                    .tag(FencingMetrics.ENFORCED, "false").counter();
            Counter accepted = registry.find(FencingMetrics.CHECKS).tag("outcome", "accepted")
                    .tag(FencingMetrics.ENFORCED, "false").counter();
            assertThat(stale == null ? 0 : stale.count()).as("what enforcing would refuse").isEqualTo(1);
            assertThat(accepted == null ? 0 : accepted.count()).isZero();
            assertThat(context.getBean(InMemoryFenceStore.class).maxSeen("ledger")).isEmpty();
        }
    }
}

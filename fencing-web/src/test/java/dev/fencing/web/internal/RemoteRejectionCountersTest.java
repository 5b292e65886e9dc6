package dev.fencing.web.internal;

import dev.fencing.web.FencingTokenClientInterceptor;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/** The caller's rejection counters: tagged by base resource, built once, and bounded in number. */
class RemoteRejectionCountersTest {

    @Test
    void theResourceTagIsTheBaseNameAndEachCounterIsBuiltOnce() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RemoteRejectionCounters counters = new RemoteRejectionCounters(registry);
        counters.increment("accounts:42", "stale");
        counters.increment("accounts:43", "stale");
        counters.increment("ledger", "duplicate");
        counters.increment("ledger:eu:7", "missing");

        assertThat(registry.get(FencingTokenClientInterceptor.REMOTE_REJECTIONS).tag("resource", "accounts")
                .tag("outcome", "stale").counter().count()).isEqualTo(2);
        assertThat(registry.get(FencingTokenClientInterceptor.REMOTE_REJECTIONS).tag("resource", "ledger")
                .tag("outcome", "duplicate").counter().count()).isEqualTo(1);
        assertThat(registry.get(FencingTokenClientInterceptor.REMOTE_REJECTIONS).tag("resource", "ledger")
                .tag("outcome", "missing").counter().count()).isEqualTo(1);
        assertThat(registry.getMeters()).hasSize(3);
    }

    @Test
    void pastTheLimitFurtherResourcesShareOneTag() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RemoteRejectionCounters counters = new RemoteRejectionCounters(registry);
        for (int i = 0; i < RemoteRejectionCounters.MAX_RESOURCES + 10; i++) {
            counters.increment("r" + i + ":1", "stale");
        }
        assertThat(registry.find(FencingTokenClientInterceptor.REMOTE_REJECTIONS).counters())
                .hasSize(RemoteRejectionCounters.MAX_RESOURCES + 1);
        Counter other = registry.get(FencingTokenClientInterceptor.REMOTE_REJECTIONS)
                .tag("resource", RemoteRejectionCounters.OTHER).counter();
        assertThat(other.count()).isEqualTo(10);
        counters.increment("r0:5", "stale");
        assertThat(registry.get(FencingTokenClientInterceptor.REMOTE_REJECTIONS).tag("resource", "r0").counter()
                .count()).as("a resource seen before keeps its own tag").isEqualTo(2);
    }

    @Test
    void withoutARegistryNothingIsCounted() {
        assertThatCode(() -> new RemoteRejectionCounters(null).increment("accounts:1", "stale"))
                .doesNotThrowAnyException();
    }
}

package dev.fencing.docs.usage;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenList;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** propagation.md's carrier of your own: it marks what it sends, so the acquiring call is not reported unchecked. */
@Timeout(30)
class CustomCarrierTest {

    /** A message of some transport the library has no carrier for. */
    static final class Message {
        final Map<String, String> headers = new HashMap<>();

        void setHeader(String name, String value) {
            headers.put(name, value);
        }
    }

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencePoint acquiring = new FencePoint("Jobs.dispatch()", "jobs", null, null, true,
            new FencingMetrics(registry));
    private final FenceGuard guard = FenceGuard.builder(new InMemoryFenceStore())
            .issuer(new InMemoryTokenIssuer()).acquireTimeout(Duration.ofSeconds(5)).build();

    private double unchecked() {
        return registry.get(FencingMetrics.UNCHECKED_LEASES).tag("resource", "jobs").counter().count();
    }

    private static void send(Message message) {
        // tag::carrier[]
        FencingSnapshot snapshot = FencingContext.snapshot();
        message.setHeader("Fencing-Token", TokenList.format(snapshot.values()));
        snapshot.markSent(snapshot.values());
        // end::carrier[]
    }

    @Test
    void aCarrierThatMarksWhatItSendsKeepsTheAcquiringCallFromBeingReported() throws Throwable {
        Message message = new Message();
        guard.invoke(acquiring, new Object[0], () -> {
            send(message);
            return null;
        });
        assertThat(TokenList.parse("Fencing-Token header", java.util.List.of(message.headers.get("Fencing-Token"))))
                .extracting(FencingToken::resource)
                .containsExactly("jobs");
        assertThat(unchecked()).isZero();
    }

    @Test
    void aCarrierThatDoesNotMarkLeavesTheCallReported() throws Throwable {
        Message message = new Message();
        guard.invoke(acquiring, new Object[0], () -> {
            message.setHeader("Fencing-Token", TokenList.format(FencingContext.snapshot().values()));
            return null;
        });
        assertThat(unchecked()).isEqualTo(1);
    }
}

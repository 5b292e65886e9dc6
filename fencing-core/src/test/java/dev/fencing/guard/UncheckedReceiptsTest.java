package dev.fencing.guard;

import dev.fencing.LogCapture;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.context.TokenUse;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Received tokens bound with uses: a check (or a carrier sending them on) marks them, and the report counts and logs
 * the others, by family, the log paced per place and family.
 */
class UncheckedReceiptsTest {

    private static final FencingToken ACCOUNT = new FencingToken("accounts:1", 34, "caller");
    private static final FencingToken ORDER = new FencingToken("orders:9", 2, "caller");

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final UncheckedReceipts receipts = new UncheckedReceipts(new FencingMetrics(registry), "http");
    private final LogCapture log = LogCapture.of(UncheckedReceipts.class);

    @AfterEach
    void stopCapture() {
        log.close();
    }

    private double count(String family) {
        return registry.find(FencingMetrics.UNCHECKED_RECEIPTS).tag("resource", family).tag("carrier", "http")
                .counters().stream().mapToDouble(Counter::count).sum();
    }

    @Test
    void aPresentedTokenIsMarkedAndTheOtherIsReportedCountedEveryTimeLoggedOncePerPlace() {
        List<FencingToken> tokens = List.of(ACCOUNT, ORDER);
        for (int call = 0; call < 3; call++) {
            List<TokenUse> uses = UncheckedReceipts.usesFor(tokens);
            try (FencingScope ignored = FencingContext.bindRemote(tokens, uses)) {
                assertThat(FencingContext.present("orders:9")).isEqualTo(ORDER);
                assertThat(FencingContext.current("accounts:1")).as("a read is no check").isEqualTo(ACCOUNT);
            }
            receipts.report("POST /internal/pay", tokens, uses);
        }
        assertThat(count("accounts")).isEqualTo(3);
        assertThat(count("orders")).isZero();
        assertThat(log.records()).singleElement().satisfies(r -> assertThat(r.getMessage())
                .startsWith("POST /internal/pay received the fencing token of resource 'accounts:1' "
                        + "(value 34, holder 'caller')"));
        receipts.report("PUT /internal/pay", tokens, UncheckedReceipts.usesFor(tokens));
        assertThat(log.records()).as("another place is logged too").hasSize(3);
    }

    @Test
    void aSnapshotOfReceivedTokensCarriesTheirUsesToAnotherThreadAndASendMarksThem() throws Exception {
        List<FencingToken> tokens = List.of(ACCOUNT);
        List<TokenUse> uses = UncheckedReceipts.usesFor(tokens);
        FencingSnapshot snapshot = FencingSnapshot.remote(tokens, uses);
        assertThat(snapshot.isRemote("accounts:1")).isTrue();
        Thread other = new Thread(() -> {
            try (FencingScope ignored = FencingContext.bindOnly(snapshot)) {
                FencingContext.snapshot().markSent(List.of(ACCOUNT));
            }
        });
        other.start();
        other.join(5_000);
        assertThat(uses.get(0).isUsed()).isTrue();
        receipts.report("POST /internal/pay", tokens, uses);
        assertThat(count("accounts")).isZero();
    }

    @Test
    void usesMustMatchTheTokens() {
        assertThatThrownBy(() -> FencingContext.bindRemote(List.of(ACCOUNT, ORDER), List.of(new TokenUse())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2 tokens and 1 uses");
        assertThatThrownBy(() -> FencingSnapshot.remote(List.of(ACCOUNT), List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(FencingContext.isEmpty()).isTrue();
    }
}

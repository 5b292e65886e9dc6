package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.MissingTokenException;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import dev.fencing.mode.ObservedCalls;
import dev.fencing.rule.ForgedTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;
import dev.fencing.store.BracketFenceStore;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Observe mode against enforce mode, outcome by outcome: an accepted token advances max_seen in both; a stale, forged
 * or missing token is refused in enforce mode and, in observe mode, counted with {@code enforced=false}, recorded and
 * let through without advancing max_seen; a store error propagates in both; a switch reaches a cached bracket.
 */
class ObserveModeTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final FenceModes modes = new FenceModes(FenceMode.ENFORCE, Map.of("accounts", FenceMode.OBSERVE));
    private final FenceGuard guard = FenceGuard.builder(store).modes(modes).build();
    private final FencePoint observed = new FencePoint("Accounts.save()", "accounts", null, null, false, metrics);
    private final FencePoint enforced = new FencePoint("Orders.save()", "orders", null, null, false, metrics);
    private final AtomicInteger ran = new AtomicInteger();
    private final FencedCall<String> body = () -> {
        ran.incrementAndGet();
        return "done";
    };

    @AfterEach
    void nothingStaysBound() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private double count(String resource, String outcome, String enforcedTag) {
        var counter = registry.find(FencingMetrics.CHECKS).tag("resource", resource).tag("outcome", outcome)
                .tag("enforced", enforcedTag).counter();
        return counter == null ? 0 : counter.count();
    }

    private Object call(FencePoint point, FencingToken token) throws Throwable {
        if (token == null) {
            return guard.invoke(point, new Object[0], body);
        }
        try (FencingScope ignored = FencingContext.bind(token)) {
            return guard.invoke(point, new Object[0], body);
        }
    }

    @Test
    void anAcceptedTokenAdvancesMaxSeenInBothModesAndIsCountedWithItsMode() throws Throwable {
        assertThat(call(observed, new FencingToken("accounts", 5, "a"))).isEqualTo("done");
        assertThat(call(enforced, new FencingToken("orders", 5, "a"))).isEqualTo("done");

        assertThat(store.maxSeen("accounts")).hasValue(5);
        assertThat(store.maxSeen("orders")).hasValue(5);
        assertThat(count("accounts", "accepted", "false")).isEqualTo(1);
        assertThat(count("accounts", "accepted", "true")).isZero();
        assertThat(count("orders", "accepted", "true")).isEqualTo(1);
        assertThat(registry.find(FencingMetrics.CHECKS).tag("resource", "orders").tag("enforced", "false").counters())
                .as("a resource never observed registers no enforced=false meter").isEmpty();
    }

    @Test
    void aStaleTokenRunsInObserveModeWithoutAdvancingMaxSeenAndIsRefusedInEnforceMode() throws Throwable {
        call(observed, new FencingToken("accounts", 9, "a"));
        call(enforced, new FencingToken("orders", 9, "a"));
        ran.set(0);

        assertThat(call(observed, new FencingToken("accounts", 6, "zombie"))).isEqualTo("done");
        assertThat(ran).hasValue(1);
        assertThat(store.maxSeen("accounts")).hasValue(9);
        assertThat(count("accounts", "stale", "false")).isEqualTo(1);

        assertThatThrownBy(() -> call(enforced, new FencingToken("orders", 6, "zombie")))
                .isInstanceOf(StaleTokenException.class);
        assertThat(ran).hasValue(1);
        assertThat(count("orders", "stale", "true")).isEqualTo(1);

        ObservedCalls.ObservedCall record = modes.observed().calls().get(0);
        assertThat(record.operation()).isEqualTo("Accounts.save()");
        assertThat(record.count("stale")).isEqualTo(1);
        assertThat(record.count("accepted")).isEqualTo(1);
        assertThat(record.lastOutcome()).isEqualTo("stale");
    }

    @Test
    void aMissingTokenRunsInObserveModeAndIsReportedByMethod() throws Throwable {
        assertThat(call(observed, null)).isEqualTo("done");
        assertThat(count("accounts", "missing", "false")).isEqualTo(1);
        assertThat(store.maxSeen("accounts")).isEmpty();
        assertThat(modes.observed().withoutToken()).singleElement()
                .satisfies(c -> assertThat(c.operation()).isEqualTo("Accounts.save()"));

        assertThatThrownBy(() -> call(enforced, null)).isInstanceOf(MissingTokenException.class);
        assertThat(ran).hasValue(1);
        assertThat(count("orders", "missing", "true")).isEqualTo(1);
    }

    @Test
    void aForgedTokenRunsInObserveModeWithoutReachingTheStore() throws Throwable {
        byte[] secret = "0123456789abcdef0123456789abcdef".getBytes();
        FenceGuard verifying = FenceGuard.builder(store).modes(modes)
                .verifier(new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", secret)))).build();
        FencingToken unsigned = new FencingToken("accounts", 7, "a");
        try (FencingScope ignored = FencingContext.bind(unsigned)) {
            assertThat(verifying.invoke(observed, new Object[0], body)).isEqualTo("done");
        }
        assertThat(store.maxSeen("accounts")).isEmpty();
        assertThat(count("accounts", "forged", "false")).isEqualTo(1);

        FencingToken forOrders = new FencingToken("orders", 7, "a");
        try (FencingScope ignored = FencingContext.bind(forOrders)) {
            assertThatThrownBy(() -> verifying.invoke(enforced, new Object[0], body))
                    .isInstanceOf(ForgedTokenException.class);
        }
        FencingToken signed = TokenSigner.hmac("k1", secret).sign(new FencingToken("accounts", 8, "a"));
        try (FencingScope ignored = FencingContext.bind(signed)) {
            verifying.invoke(observed, new Object[0], body);
        }
        assertThat(store.maxSeen("accounts")).hasValue(8);
    }

    @Test
    void aStoreErrorIsNoVerdictAndPropagatesInObserveMode() {
        FenceStore failing = new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) {
                throw new FenceStoreException(resource, token, "database down", null);
            }
        };
        FenceGuard failingGuard = FenceGuard.builder(failing).modes(modes).build();
        try (FencingScope ignored = FencingContext.bind(new FencingToken("accounts", 3, "a"))) {
            assertThatThrownBy(() -> failingGuard.invoke(observed, new Object[0], body))
                    .isInstanceOf(FenceStoreException.class).hasMessageContaining("database down");
        }
        assertThat(ran).hasValue(0);
        assertThat(registry.find(FencingMetrics.CHECKS).tag("outcome", "error").tag("enforced", "false").counter()
                .count()).isEqualTo(1);
    }

    @Test
    void aModeSwitchedAtRuntimeReachesACachedBracket() throws Throwable {
        FenceBracket bracket = guard.bracket(enforced);
        assertThat(bracket).isNotNull();
        assertThat(bracket.enforcing()).isTrue();

        modes.set("orders", FenceMode.OBSERVE, "test");
        assertThat(bracket.enforcing()).isFalse();
        assertThat(call(enforced, null)).isEqualTo("done");
        assertThat(count("orders", "missing", "false")).isEqualTo(1);

        modes.set("orders", FenceMode.ENFORCE, "test");
        assertThat(bracket.enforcing()).isTrue();
        try (FencingScope ignored = FencingContext.bind(new FencingToken("orders", 4, "a"))) {
            FencingToken token = bracket.token();
            BracketFenceStore.Entry entry = bracket.enter(token);
            bracket.exit(entry);
        }
        assertThat(count("orders", "accepted", "true")).isEqualTo(1);
        assertThatThrownBy(() -> call(enforced, null)).isInstanceOf(MissingTokenException.class);
    }

    @Test
    void aStoreJudgingAtCommitRefusesObserveModeAtBuildAndAtRuntime() {
        FenceStore atCommit = new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) {
                throw new AssertionError("not called");
            }

            @Override
            public boolean judgesAtCommit() {
                return true;
            }
        };
        FenceModes observing = new FenceModes(FenceMode.ENFORCE, Map.of("accounts", FenceMode.OBSERVE));
        assertThatThrownBy(() -> FenceGuard.builder(atCommit).modes(observing).build())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("resource 'accounts'").hasMessageContaining("check-at-commit");

        FenceModes enforcing = FenceModes.enforcing();
        FenceGuard built = FenceGuard.builder(atCommit).modes(enforcing).build();
        assertThatThrownBy(() -> built.modes().set(null, FenceMode.OBSERVE, "ops"))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("check-at-commit");
        assertThat(enforcing.observes("accounts")).isFalse();
    }
}

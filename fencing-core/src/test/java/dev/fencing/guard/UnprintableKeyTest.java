package dev.fencing.guard;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Keys and holders a reader cannot see in a message: a key text no token can carry (a control character, an
 * unpaired surrogate) is refused as an invalid key on every path, never counted as a missing token nor acquired,
 * and every refusal shows such characters escaped, so a key from a request cannot forge a log line or hide itself.
 */
@Timeout(10)
class UnprintableKeyTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final AtomicInteger writes = new AtomicInteger();

    @AfterEach
    void nothingStaysBound() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private FencePoint point(boolean acquire) {
        return new FencePoint("Repo.write(String)", "docs", args -> args[0], "#id", acquire, metrics);
    }

    private double checks(String outcome) {
        Counter counter = registry.find("fencing.checks").tag("resource", "docs").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    private Object write(FenceGuard guard, FencePoint point, String key) throws Throwable {
        return guard.invoke(point, new Object[] {key}, writes::incrementAndGet);
    }

    @Test
    void aKeyWithAControlCharacterIsAnInvalidKeyOnEveryPathShownEscaped() {
        String key = "7\nINFO  forged log line";
        FenceGuard guard = FenceGuard.builder(store).build();
        FenceBracket bracket = guard.bracket(point(false));
        try (FencingScope ignored = FencingContext.bind(new FencingToken("docs:7", 5, "client"))) {
            assertThatThrownBy(() -> write(guard, point(false), key)).isInstanceOf(InvalidKeyException.class)
                    .hasMessageContaining("'7\\u000AINFO  forged log line'").hasMessageNotContaining("\n")
                    .hasMessageContaining("Repo.write(String)").hasMessageContaining("#id");
            assertThatThrownBy(() -> bracket.token(new Object[] {key})).isInstanceOf(InvalidKeyException.class)
                    .hasMessageNotContaining("\n");
            assertThatThrownBy(() -> bracket.token(1, key, null, null)).isInstanceOf(InvalidKeyException.class);
        }
        assertThat(checks("invalid")).isEqualTo(3);
        assertThat(checks("missing")).isZero();
        assertThat(writes).hasValue(0);
        assertThat(store.maxSeen("docs:7")).isEmpty();
    }

    @Test
    void anUnpairedSurrogateIsRefusedAndAPairedOneIsAKeyLikeAnyOther() throws Throwable {
        FenceGuard guard = FenceGuard.builder(store).build();
        try (FencingScope ignored = FencingContext.bind(new FencingToken("docs:\uD83D\uDE00", 5, "client"))) {
            assertThatThrownBy(() -> write(guard, point(false), "a\uD83D")).isInstanceOf(InvalidKeyException.class)
                    .hasMessageContaining("'a\\uD83D'");
            assertThat(write(guard, point(false), "\uD83D\uDE00")).isEqualTo(1);
        }
        assertThat(checks("invalid")).isEqualTo(1);
        assertThat(checks("accepted")).isEqualTo(1);
    }

    /**
     * Observe mode lets a call whose key names no entity run, as it lets a stale or missing token's call run, and
     * counts it where an operator deciding to enforce looks: {@code invalid} with {@code enforced=false}, and the
     * method in the observed calls (a rollout trial's inserts keyed on a generated id were refused in observe mode,
     * and the observed counts showed nothing). An acquiring method never runs without its lock.
     */
    @Test
    void observeModeCountsAnInvalidKeyAsEnforcingWouldRefuseItAndLetsTheCallRun() throws Throwable {
        FenceModes modes = new FenceModes(FenceMode.ENFORCE, Map.of("docs", FenceMode.OBSERVE));
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        FenceGuard guard = FenceGuard.builder(store).issuer(issuer).modes(modes).build();
        assertThat(write(guard, point(false), "7\u0000")).isEqualTo(1);    // a text no token can carry
        assertThat(write(guard, point(false), null)).isEqualTo(2);          // a key that is null (an insert's id)
        assertThat(store.maxSeen("docs:7\u0000")).isEmpty();
        Counter observed = registry.find("fencing.checks").tag("resource", "docs").tag("outcome", "invalid")
                .tag("enforced", "false").counter();
        assertThat(observed.count()).isEqualTo(2);
        assertThat(registry.find("fencing.checks").tag("outcome", "invalid").tag("enforced", "true").counter()
                .count()).isZero();
        assertThat(modes.observed().calls()).singleElement().satisfies(call -> {
            assertThat(call.operation()).isEqualTo("Repo.write(String)");
            assertThat(call.count("invalid")).isEqualTo(2);
        });

        assertThatThrownBy(() -> write(guard, point(true), null)).isInstanceOf(InvalidKeyException.class);
        assertThat(writes).hasValue(2);
        assertThat(registry.find("fencing.checks").tag("outcome", "invalid").tag("enforced", "true").counter()
                .count()).as("the acquiring call, refused").isEqualTo(1);
    }

    @Test
    void anAcquiringCallWithSuchAKeyTakesNoLock() {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        FenceGuard guard = FenceGuard.builder(store).issuer(issuer).build();
        assertThatThrownBy(() -> write(guard, point(true), "7\r")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("'7\\u000D'");
        assertThat(issuer.highestIssued("docs:7\r")).isZero();
        assertThat(writes).hasValue(0);
        assertThat(checks("invalid")).isEqualTo(1);
    }

    @Test
    void invisibleCharactersAreShownEscapedInTheMissingAndStaleRefusals() throws Throwable {
        FenceGuard guard = FenceGuard.builder(store).build();
        // a zero-width space: a valid key, another entity than "7", and invisible as it is
        try (FencingScope ignored = FencingContext.bind(new FencingToken("docs:7", 5, "client"))) {
            assertThatThrownBy(() -> write(guard, point(false), "7\u200B"))
                    .isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("resource 'docs:7\\u200B'").hasMessageContaining("only for 'docs:7'");
        }
        store.raiseFloor("docs:7", 10);
        try (FencingScope ignored = FencingContext.bind(new FencingToken("docs:7", 5, "zombie\u202Eevil"))) {
            assertThatThrownBy(() -> write(guard, point(false), "7")).isInstanceOf(StaleTokenException.class)
                    .hasMessageContaining("holder 'zombie\\u202Eevil'");
        }
        assertThat(checks("missing")).isEqualTo(1);
        assertThat(checks("stale")).isEqualTo(1);
        assertThat(writes).hasValue(0);
    }
}

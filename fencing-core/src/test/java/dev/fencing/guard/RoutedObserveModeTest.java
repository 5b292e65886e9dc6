package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;
import dev.fencing.mode.FenceMode;
import dev.fencing.mode.FenceModes;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Observe mode is refused for what a store judging at commit fences, and only for that: behind a
 * {@link RoutingFenceStore}, a resource routed to a store that checks before the body may be observed (a new user's
 * trial followed stores.md's routing recipe and had observe refused for every resource, the routed one included).
 */
class RoutedObserveModeTest {

    /** A store that judges at commit, as JdbcFenceStore.checkAtCommit(true) does (the fencing is not exercised). */
    private static final FenceStore AT_COMMIT = new FenceStore() {
        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
            throw new UnsupportedOperationException("not called");
        }

        @Override
        public boolean judgesAtCommit() {
            return true;
        }
    };

    private static FenceGuard guard(FenceStore store, FenceMode defaultMode, Map<String, FenceMode> modes) {
        return FenceGuard.builder(store).modes(new FenceModes(defaultMode, modes)).build();
    }

    @Test
    void aResourceRoutedToAStoreCheckingBeforeTheBodyMayBeObservedTheFallbacksMayNot() {
        RoutingFenceStore routing = RoutingFenceStore.builder().route("payments", new InMemoryFenceStore())
                .fallback(AT_COMMIT).build();
        assertThatCode(() -> guard(routing, FenceMode.ENFORCE, Map.of("payments", FenceMode.OBSERVE)))
                .doesNotThrowAnyException();
        assertThatThrownBy(() -> guard(routing, FenceMode.ENFORCE, Map.of("orders", FenceMode.OBSERVE)))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("resource 'orders'")
                .hasMessageContaining("routes it to a store that judges tokens at commit");
        assertThatThrownBy(() -> guard(routing, FenceMode.OBSERVE, Map.of()))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("observe mode as the default of every resource");
        // and at runtime: the routed resource switches, the fallback's does not, and stays as it was
        FenceModes modes = guard(routing, FenceMode.ENFORCE, Map.of()).modes();
        modes.set("payments", FenceMode.OBSERVE, "test");
        assertThatThrownBy(() -> modes.set("orders", FenceMode.OBSERVE, "test"))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("'orders'");
        assertThatThrownBy(() -> modes.set(null, FenceMode.OBSERVE, "test"))
                .isInstanceOf(FencingConfigurationException.class);
        assertThatCode(() -> modes.set("payments", FenceMode.ENFORCE, "test")).doesNotThrowAnyException();
    }

    @Test
    void aResourceWithAKeyedFormRoutedToAStoreJudgingAtCommitMayNotBeObserved() {
        RoutingFenceStore routing = RoutingFenceStore.builder().route("ledger:eu", AT_COMMIT)
                .fallback(new InMemoryFenceStore()).build();
        assertThatThrownBy(() -> guard(routing, FenceMode.ENFORCE, Map.of("ledger", FenceMode.OBSERVE)))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("resource 'ledger'");
        assertThatCode(() -> guard(routing, FenceMode.ENFORCE, Map.of("ledgers", FenceMode.OBSERVE)))
                .doesNotThrowAnyException();
    }

    @Test
    void aStoreJudgingAtCommitForEveryResourceRefusesObserveForEachOne() {
        assertThatThrownBy(() -> guard(AT_COMMIT, FenceMode.ENFORCE, Map.of("payments", FenceMode.OBSERVE)))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("resource 'payments'")
                .hasMessageContaining("judges tokens at commit");
        assertThatCode(() -> guard(AT_COMMIT, FenceMode.ENFORCE, Map.of())).doesNotThrowAnyException();
    }
}

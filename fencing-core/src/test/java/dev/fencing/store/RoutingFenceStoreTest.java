package dev.fencing.store;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RoutingFenceStoreTest extends FenceStoreContract {

    private final InMemoryFenceStore accounts = new InMemoryFenceStore();
    private final InMemoryFenceStore everythingElse = new InMemoryFenceStore();
    private final RoutingFenceStore store = RoutingFenceStore.builder()
            .route("accounts", accounts).fallback(everythingElse).build();

    @Override
    protected FenceStore store() {
        return store;
    }

    @Test
    void routesAResourceAndItsKeyedFormsToItsStore() throws Throwable {
        store.fence("accounts", new FencingToken("accounts", 1, "h"), () -> null);
        store.fence("accounts:42", new FencingToken("accounts:42", 2, "h"), () -> null);
        store.fence("accountsx", new FencingToken("accountsx", 3, "h"), () -> null);
        assertThat(accounts.maxSeen("accounts")).hasValue(1);
        assertThat(accounts.maxSeen("accounts:42")).hasValue(2);
        assertThat(everythingElse.maxSeen("accountsx")).hasValue(3);
    }

    @Test
    void withoutAFallbackAnUnroutedResourceIsRefused() {
        RoutingFenceStore strict = RoutingFenceStore.builder().route("accounts", accounts).build();
        assertThatThrownBy(() -> strict.fence("orders", new FencingToken("orders", 1, "h"), () -> null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'orders'");
        assertThatThrownBy(() -> RoutingFenceStore.builder().route("a", accounts).route("a", accounts))
                .hasMessageContaining("routed twice");
    }
}

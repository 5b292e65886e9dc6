package dev.fencing.store;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The routing itself; the behaviour every store shares is checked by {@code FenceStoreContract}, which
 * fencing-test-support runs against a routing store ({@code RoutingFenceStoreContractTest}).
 */
class RoutingFenceStoreTest {

    private final InMemoryFenceStore accounts = new InMemoryFenceStore();
    private final InMemoryFenceStore everythingElse = new InMemoryFenceStore();
    private final RoutingFenceStore store = RoutingFenceStore.builder()
            .route("accounts", accounts).fallback(everythingElse).build();

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
    void theMostSpecificRouteWins() throws Throwable {
        InMemoryFenceStore ledger = new InMemoryFenceStore();
        InMemoryFenceStore ledgerEu = new InMemoryFenceStore();
        InMemoryFenceStore ledgerEu7 = new InMemoryFenceStore();
        // registration order must not matter: the general route first, then the specific ones, and the reverse
        RoutingFenceStore generalFirst = RoutingFenceStore.builder()
                .route("ledger", ledger).route("ledger:eu", ledgerEu).route("ledger:eu:7:x", ledgerEu7).build();
        RoutingFenceStore specificFirst = RoutingFenceStore.builder()
                .route("ledger:eu:7:x", ledgerEu7).route("ledger:eu", ledgerEu).route("ledger", ledger).build();
        for (RoutingFenceStore routing : new RoutingFenceStore[] {generalFirst, specificFirst}) {
            assertThat(routing.storeFor("ledger:eu:7")).isSameAs(ledgerEu);
            assertThat(routing.routeOf("ledger:eu:7")).isEqualTo("ledger:eu");
            assertThat(routing.routeOf("ledger:eu:7:x:1")).isEqualTo("ledger:eu:7:x");
            assertThat(routing.routeOf("ledgerx")).as("no route: the fallback's").isNull();
            assertThat(routing.storeFor("ledger:eu")).isSameAs(ledgerEu);
            assertThat(routing.storeFor("ledger:eu:7:x")).isSameAs(ledgerEu7);
            assertThat(routing.storeFor("ledger:eu:7:x:1")).isSameAs(ledgerEu7);
            assertThat(routing.storeFor("ledger:us:7")).isSameAs(ledger);
            assertThat(routing.storeFor("ledger")).isSameAs(ledger);
            assertThat(routing.storeFor("ledger:eux")).isSameAs(ledger);
        }
        generalFirst.fence("ledger:eu:7", new FencingToken("ledger:eu:7", 5, "h"), () -> null);
        assertThat(ledgerEu.maxSeen("ledger:eu:7")).hasValue(5);
        assertThat(ledger.maxSeen("ledger:eu:7")).isEmpty();
    }

    @Test
    void itListsEachStoreItRoutesToOnceWithTheFallback() {
        RoutingFenceStore twice = RoutingFenceStore.builder().route("accounts", accounts).route("orders", accounts)
                .fallback(everythingElse).build();
        assertThat(twice.stores()).containsExactlyInAnyOrder(accounts, everythingElse);
        assertThat(RoutingFenceStore.builder().route("accounts", accounts).build().stores()).containsExactly(accounts);
    }

    @Test
    void aResourceIsGuardedByItsRouteARouteOfSomeOfItsKeysOrTheFallback() {
        RoutingFenceStore strict = RoutingFenceStore.builder().route("accounts", accounts)
                .route("ledger:eu", everythingElse).build();
        assertThat(strict.unguarded("accounts")).isNull();
        assertThat(strict.unguarded("accounts:42")).isNull();
        assertThat(strict.unguarded("ledger")).as("some of its keys are routed").isNull();
        assertThat(strict.unguarded("orders")).contains("'orders'").contains("no fallback")
                .contains("routes: [").contains("accounts").contains("ledger:eu");
        assertThat(store.unguarded("orders")).as("the fallback").isNull();
        RoutingFenceStore nested = RoutingFenceStore.builder().route("orders", strict).build();
        assertThat(nested.unguarded("orders")).as("a route to a store that does not guard it").contains("'orders'");
    }

    /**
     * Every route's failure at once (a re-trial with two databases learnt of the second missing table a start later).
     */
    @Test
    void verifyNamesTheFailureOfEveryRoutesStore() {
        class Missing implements FenceStore {
            private final String table;

            Missing(String table) {
                this.table = table;
            }

            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void verify() {
                throw new dev.fencing.FencingConfigurationException("Fence table '" + table + "' is missing");
            }
        }
        RoutingFenceStore two = RoutingFenceStore.builder().route("accounts", new Missing("pg"))
                .route("ledger", new Missing("maria")).fallback(everythingElse).build();
        assertThatThrownBy(two::verify).isInstanceOf(dev.fencing.FencingConfigurationException.class)
                .hasMessageContaining("The stores of 2 routes failed to verify")
                .hasMessageContaining("Fence table 'pg' is missing")
                .hasMessageContaining("Fence table 'maria' is missing");
        RoutingFenceStore one = RoutingFenceStore.builder().route("accounts", new Missing("pg")).build();
        assertThatThrownBy(one::verify).hasMessage("Fence table 'pg' is missing");
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

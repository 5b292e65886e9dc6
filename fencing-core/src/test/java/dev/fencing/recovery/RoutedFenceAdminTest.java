package dev.fencing.recovery;

import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A routing store's stores administered as one: each resource read, listed and changed in its route's store. */
class RoutedFenceAdminTest {

    private final InMemoryFenceStore accounts = new InMemoryFenceStore();
    private final InMemoryFenceStore ledger = new InMemoryFenceStore();
    private final RoutingFenceStore routing = RoutingFenceStore.builder().route("accounts", accounts)
            .route("ledger", ledger).build();

    private static void write(InMemoryFenceStore store, String resource, long value) throws Throwable {
        store.fence(resource, new FencingToken(resource, value, "h"), () -> null);
    }

    @Test
    void eachResourceIsListedReadAndChangedInItsRoutesStore() throws Throwable {
        write(accounts, "accounts:1", 5);
        write(ledger, "ledger:1", 9);
        write(accounts, "ledger:2", 70);            // a row the ledger's route does not send here: not its state
        ledger.raiseFloor("ledger\u001f", 3);        // a family's floor row goes with the family's route
        RoutedFenceAdmin admin = RoutedFenceAdmin.of(routing, store -> store);

        assertThat(admin.resources(null, 10)).containsExactly("accounts:1", "ledger\u001f", "ledger:1");
        assertThat(admin.resources("ledger\u001f", 1)).containsExactly("ledger:1");
        assertThat(admin.highestMaxSeen()).hasValue(70); // every table's highest: an upper bound
        assertThat(admin.maxSeen("ledger:2")).as("from the ledger's store: its family's floor").hasValue(3);

        admin.raiseFloor("ledger:2", 20);
        assertThat(ledger.maxSeen("ledger:2")).hasValue(20);
        assertThat(accounts.maxSeen("ledger:2")).hasValue(70);
        assertThat(admin.lowerMaxSeen("accounts:1", 2)).as("as it was").isEqualTo(5);
        assertThat(accounts.maxSeen("accounts:1")).hasValue(2);
        assertThatThrownBy(() -> admin.maxSeen("orders:1")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("No fence store is routed for resource 'orders:1'");
    }

    /**
     * Rows a store holds for other routes are skipped page after page, so a short page still means the end: before,
     * a page of strays came back empty and a floor raise walking the pages stopped there, missing what followed.
     */
    @Test
    void aPageFullOfOtherRoutesRowsDoesNotEndTheListing() throws Throwable {
        write(accounts, "accounts:9", 1);
        for (int i = 0; i < 5; i++) {
            write(accounts, "ledger:" + i, 1);      // strays: the ledger's route sends these to the ledger store
        }
        write(accounts, "zzz", 1);                 // no route: the fallback's, this store's own
        RoutingFenceStore withFallback = RoutingFenceStore.builder().route("ledger", ledger).fallback(accounts).build();
        RoutedFenceAdmin admin = RoutedFenceAdmin.of(withFallback, store -> store);

        assertThat(admin.resources("accounts:9", 2)).as("past three pages of strays").containsExactly("zzz");
        assertThat(admin.resources(null, 2)).containsExactly("accounts:9", "zzz");
    }

    @Test
    void aRouteWhoseStoreCannotBeAdministeredLeavesNone() {
        FenceStore opaque = new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, dev.fencing.store.FencedCall<T> write) {
                throw new UnsupportedOperationException();
            }
        };
        RoutingFenceStore withOpaque = RoutingFenceStore.builder().route("accounts", accounts).fallback(opaque).build();
        assertThat(RoutedFenceAdmin.of(withOpaque, store -> store)).isNull();
        RoutingFenceStore nested = RoutingFenceStore.builder().route("orders", routing).build();
        assertThat(RoutedFenceAdmin.of(nested, store -> store)).isNotNull();
    }
}

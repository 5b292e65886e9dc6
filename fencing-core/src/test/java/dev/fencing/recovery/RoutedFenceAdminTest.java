package dev.fencing.recovery;

import dev.fencing.metrics.AdminMetrics;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.List;

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

    /**
     * A family whose key has a route of its own ({@code reg:eu}, one store per region) keeps a floor in that route's
     * store too: a floor raise after a restore raises it there, and a zombie's token for the key, below the floor, is
     * refused (a review found the floor raised in the family's route's store only, and token 39 accepted).
     */
    @Test
    void aFamilysFloorIsRaisedInEveryStoreThatJudgesAKeyOfIt() throws Throwable {
        InMemoryFenceStore eu = new InMemoryFenceStore();
        InMemoryFenceStore main = new InMemoryFenceStore();
        RoutingFenceStore regions = RoutingFenceStore.builder().route("reg:eu", eu).fallback(main).build();
        regions.fence("reg:us", new FencingToken("reg:us", 5, "us"), () -> null);
        RoutedFenceAdmin admin = RoutedFenceAdmin.of(regions, store -> store);
        FloorRaise raise = raiseOf(admin);

        raise.raiseAll(100, "ops:test", List.of(), List.of("reg"));

        assertThat(eu.familyFloor("reg")).hasValue(100);
        assertThat(main.familyFloor("reg")).hasValue(100);
        assertThatThrownBy(() -> regions.fence("reg:eu", new FencingToken("reg:eu", 39, "zombie"), () -> null))
                .isInstanceOf(StaleTokenException.class);
        assertThat(admin.maxSeen("reg\u001f")).hasValue(100);
        // the floor listed once, judged by both stores (reg:eu: the refused check's slot, at the family's floor)
        assertThat(admin.resources(null, 10)).containsExactly("reg\u001f", "reg:eu", "reg:us");
        // a lowering above one store's floor is refused before any store changes
        eu.raiseFloor("reg\u001f", 120);
        assertThat(admin.maxSeen("reg\u001f")).as("the lowest of them").hasValue(100);
        assertThatThrownBy(() -> admin.lowerMaxSeen("reg\u001f", 110)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("above its current max_seen 100");
        assertThat(eu.familyFloor("reg")).hasValue(120);
        assertThat(main.familyFloor("reg")).hasValue(100);
    }

    /**
     * Routes for the keys of a family only, and no fallback: a floor raise reaches the family's floor through those
     * routes; a family that no route covers is refused before anything changed (a review found the keys raised first
     * and then the raise refused as bad input).
     */
    @Test
    void aRaiseOverPerKeyRoutesWithoutAFallbackRaisesTheFamilyOrChangesNothing() throws Throwable {
        InMemoryFenceStore eu = new InMemoryFenceStore();
        InMemoryFenceStore us = new InMemoryFenceStore();
        RoutingFenceStore regions = RoutingFenceStore.builder().route("reg:eu", eu).route("reg:us", us).build();
        regions.fence("reg:eu", new FencingToken("reg:eu", 5, "h"), () -> null);
        regions.fence("reg:us", new FencingToken("reg:us", 6, "h"), () -> null);
        RoutedFenceAdmin admin = RoutedFenceAdmin.of(regions, store -> store);
        FloorRaise raise = raiseOf(admin);

        assertThatThrownBy(() -> raise.raiseAll(100, "ops:test", List.of(), List.of("orders")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("No fence store is routed for resource 'orders'");
        assertThat(eu.maxSeen("reg:eu")).as("nothing changed").hasValue(5);
        assertThat(us.maxSeen("reg:us")).hasValue(6);

        raise.raiseAll(100, "ops:test");
        assertThat(eu.maxSeen("reg:eu")).hasValue(100);
        assertThat(us.maxSeen("reg:us")).hasValue(100);
        assertThat(eu.familyFloor("reg")).hasValue(100);
        assertThat(us.familyFloor("reg")).hasValue(100);
    }

    /**
     * The family's floor read behind the routes is the weakest of its stores' (none while one has none), so a raise
     * finds a key route's store without the floor (a restored table), or below the target, although another store has
     * it above: a re-trial found the raise skipped there, and a zombie's 39 accepted after the raise to 100.
     */
    @Test
    void aRaiseReachesAKeyRoutesStoreWhenAnotherStoreHasTheFloorAlready() throws Throwable {
        InMemoryFenceStore eu = new InMemoryFenceStore();
        InMemoryFenceStore main = new InMemoryFenceStore();
        RoutingFenceStore regions = RoutingFenceStore.builder().route("reg:eu", eu).fallback(main).build();
        RoutedFenceAdmin admin = RoutedFenceAdmin.of(regions, store -> store);
        FloorRaise raise = raiseOf(admin);
        main.raiseFloor("reg\u001f", 150);
        assertThat(admin.maxSeen("reg\u001f")).as("eu has none").isEmpty();

        raise.raiseAll(100, "ops:test", List.of(), List.of("reg"));
        assertThat(eu.familyFloor("reg")).hasValue(100);
        assertThat(main.familyFloor("reg")).as("never lowered").hasValue(150);
        assertThatThrownBy(() -> regions.fence("reg:eu", new FencingToken("reg:eu", 39, "zombie"), () -> null))
                .isInstanceOf(StaleTokenException.class);

        eu.raiseFloor("reg\u001f", 120);                   // eu restored with a lower floor than main's
        raise.raiseAll(140, "ops:test", List.of(), List.of("reg"));
        assertThat(eu.familyFloor("reg")).hasValue(140);
        assertThat(admin.maxSeen("reg\u001f")).hasValue(140);
    }

    /** A floor raise over {@code admin}, without an issuer: only the value given is raised to. */
    private static FloorRaise raiseOf(RoutedFenceAdmin admin) {
        return new FloorRaise(admin, admin, null, new AdminMetrics(new SimpleMeterRegistry()));
    }
}

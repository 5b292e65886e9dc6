package dev.fencing.boot.actuate;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.FenceAdmin;
import dev.fencing.recovery.FenceInventory;
import dev.fencing.recovery.FloorRaise;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.recovery.MaxSeenReset;
import dev.fencing.recovery.RoutedFenceAdmin;
import dev.fencing.store.FenceStore;
import dev.fencing.store.RoutingFenceStore;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Builds the {@link MaxSeenReset} and the {@link FloorRaise} of an application's store and issuer for the actuator: the
 * store's own {@link FenceAdmin} (the in-memory store), a {@code JdbcFenceAdmin} on a JDBC store, those of a routing
 * store's stores as one ({@link RoutedFenceAdmin}), and the issuer when it is
 * {@link IssuedTokens}. A store without an admin is a configuration error, reported at startup.
 */
final class FenceAdmins {

    private FenceAdmins() {
    }

    /**
     * @throws FencingConfigurationException when {@code store} cannot be administered
     */
    static MaxSeenReset reset(FenceStore store, TokenIssuer issuer, MeterRegistry registry) {
        return new MaxSeenReset(admin(store), issued(issuer), new AdminMetrics(registry));
    }

    /**
     * The floor raise after a restore on the same store and issuer, {@code null} when the store cannot list its
     * resources ({@link FenceInventory}).
     *
     * @throws FencingConfigurationException when {@code store} cannot be administered
     */
    static FloorRaise floorRaise(FenceStore store, TokenIssuer issuer, MeterRegistry registry) {
        FenceAdmin admin = admin(store);
        if (!(admin instanceof FenceInventory inventory)) {
            return null;
        }
        return new FloorRaise(admin, inventory, issued(issuer), new AdminMetrics(registry));
    }

    private static IssuedTokens issued(TokenIssuer issuer) {
        return issuer instanceof IssuedTokens tokens ? tokens : null;
    }

    /** {@link #admin}, or {@code null} for a store that cannot be administered. */
    private static FenceAdmin adminOrNull(FenceStore store) {
        try {
            return admin(store);
        } catch (FencingConfigurationException e) {
            return null;
        }
    }

    private static FenceAdmin admin(FenceStore store) {
        if (store instanceof FenceAdmin own) {
            return own;
        }
        if (JdbcParts.isJdbc(store)) {
            return JdbcParts.admin(store);
        }
        // behind a routing store, each resource in its route's store, when every one of them can be administered
        FenceAdmin routed = store instanceof RoutingFenceStore routing
                ? RoutedFenceAdmin.of(routing, FenceAdmins::adminOrNull) : null;
        if (routed == null) {
            throw new FencingConfigurationException("fencing.admin.enabled=true, but the fence store "
                    + store.getClass().getName() + " offers no administration (FenceAdmin); use a JDBC or in-memory "
                    + "store (also behind a RoutingFenceStore), or turn fencing.admin.enabled off");
        }
        return routed;
    }
}

package dev.fencing.boot.actuate;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.FenceAdmin;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.recovery.MaxSeenReset;
import dev.fencing.store.FenceStore;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Builds the {@link MaxSeenReset} of an application's store and issuer for the actuator: the store's own
 * {@link FenceAdmin} (the in-memory store) or a {@code JdbcFenceAdmin} on a JDBC store, and the issuer when it is
 * {@link IssuedTokens}. A store without an admin is a configuration error, reported at startup.
 */
final class FenceAdmins {

    private FenceAdmins() {
    }

    /**
     * @throws FencingConfigurationException when {@code store} cannot be administered
     */
    static MaxSeenReset reset(FenceStore store, TokenIssuer issuer, MeterRegistry registry) {
        FenceAdmin admin;
        if (store instanceof FenceAdmin own) {
            admin = own;
        } else if (JdbcParts.isJdbc(store)) {
            admin = JdbcParts.admin(store);
        } else {
            throw new FencingConfigurationException("fencing.admin.enabled=true, but the fence store "
                    + store.getClass().getName() + " offers no administration (FenceAdmin); use a JDBC or in-memory "
                    + "store, or turn fencing.admin.enabled off");
        }
        IssuedTokens issued = issuer instanceof IssuedTokens tokens ? tokens : null;
        return new MaxSeenReset(admin, issued, new AdminMetrics(registry));
    }
}

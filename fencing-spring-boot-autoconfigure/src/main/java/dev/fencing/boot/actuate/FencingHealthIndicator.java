package dev.fencing.boot.actuate;

import dev.fencing.issuer.TokenIssuer;
import dev.fencing.store.FenceStore;
import dev.fencing.store.RoutingFenceStore;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.core.NestedExceptionUtils;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The {@code fencing} health component: UP when the fence store verifies ({@link FenceStore#verify()}) and, for a
 * {@code JdbcFenceStore}, its table answers a live read (verify() remembers its first success, so a table dropped
 * after startup would go unnoticed without it); and the token issuer's lock service answers now
 * ({@link TokenIssuer#probe()}: ZooKeeper connected and answering, etcd answering a quorum read, the JDBC lease table
 * verified and answering a read). DOWN with the failure's message otherwise. Details: the store's type and table,
 * the issuer's type and table. A reactive application's store ({@link #reactive}) is checked the same way, an R2DBC
 * store's table with a live read.
 */
public class FencingHealthIndicator implements HealthIndicator {

    /** A {@link FenceStore}, or a reactive application's {@code ReactiveFenceStore}. */
    private final Object store;
    private final Runnable verify;
    private final TokenIssuer issuer;

    /**
     * @param store  the application's fence store
     * @param issuer its token issuer, {@code null} when none
     */
    public FencingHealthIndicator(FenceStore store, TokenIssuer issuer) {
        this(store, Objects.requireNonNull(store, "store")::verify, issuer);
    }

    private FencingHealthIndicator(Object store, Runnable verify, TokenIssuer issuer) {
        this.store = Objects.requireNonNull(store, "store");
        this.verify = verify;
        this.issuer = issuer;
    }

    /**
     * The health of a reactive application whose fence store is a {@code ReactiveFenceStore} (fencing-reactor), with
     * no blocking one: {@code verify} is its {@code verify()}; an R2DBC store's table also answers a live read.
     */
    public static FencingHealthIndicator reactive(Object reactiveStore, Runnable verify, TokenIssuer issuer) {
        return new FencingHealthIndicator(reactiveStore, verify, issuer);
    }

    @Override
    public Health health() {
        Map<String, Object> storeDetails = FencingEndpoint.describe(store);
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("store", storeDetails);
        if (issuer != null) {
            details.put("issuer", FencingEndpoint.describe(issuer));
        }
        try {
            verify.run();
            if (store instanceof FenceStore blocking) {
                probe(blocking, null);
            } else if (R2dbcParts.isR2dbc(store)) {
                R2dbcParts.probe(store);
            }
        } catch (RoutedStoreDown e) {
            return Health.down().withDetails(details).withDetail("error", "fence store of route '" + e.route
                    + "': " + message(e.getCause())).build();
        } catch (RuntimeException e) {
            return Health.down().withDetails(details).withDetail("error", "fence store: " + message(e)).build();
        }
        if (issuer != null) {
            try {
                issuer.probe();
            } catch (RuntimeException e) {
                return Health.down().withDetails(details).withDetail("error", "token issuer: " + message(e)).build();
            }
        }
        return Health.up().withDetails(details).build();
    }

    /**
     * A live read of a JDBC store's table; of each store a routing store sends resources to, at any depth, naming
     * the route of the one that fails ({@code route}: the route that led here, {@code null} at the top).
     */
    private static void probe(FenceStore store, String route) {
        if (store instanceof RoutingFenceStore routing) {
            routing.routes().forEach((resource, routed) -> probe(routed, route != null ? route : resource));
            if (routing.fallback() != null) {
                probe(routing.fallback(), route != null ? route : "(fallback)");
            }
        } else if (JdbcParts.isJdbc(store)) {
            try {
                JdbcParts.probe(store);
            } catch (RuntimeException e) {
                if (route == null) {
                    throw e;
                }
                throw new RoutedStoreDown(route, e);
            }
        }
    }

    /** A routed store's failure, with the route it serves. */
    private static final class RoutedStoreDown extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String route;

        RoutedStoreDown(String route, RuntimeException cause) {
            super(cause.getMessage(), cause, false, false);
            this.route = route;
        }
    }

    /** The failure's type and message, and its root cause's when that says more (the database's own words). */
    static String message(Throwable e) {
        String message = e.getMessage();
        String text = message == null ? e.getClass().getName() : e.getClass().getSimpleName() + ": " + message;
        Throwable root = NestedExceptionUtils.getRootCause(e);
        String said = root == null ? null : root.getMessage();
        return said == null || said.isBlank() || text.contains(said) ? text : text + " (" + said.strip() + ")";
    }
}

package dev.fencing.boot.actuate;

import dev.fencing.issuer.TokenIssuer;
import dev.fencing.store.FenceStore;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The {@code fencing} health component: UP when the fence store verifies ({@link FenceStore#verify()}) and, for a
 * {@code JdbcFenceStore}, its table answers a live read (verify() remembers its first success, so a table dropped
 * after startup would go unnoticed without it); and the token issuer's lock service answers now
 * ({@link TokenIssuer#probe()}: ZooKeeper connected and answering, etcd answering a quorum read, the JDBC lease table
 * verified and answering a read). DOWN with the failure's message otherwise. Details: the store's type and table, the issuer's type and
 * table.
 */
public class FencingHealthIndicator implements HealthIndicator {

    private final FenceStore store;
    private final TokenIssuer issuer;

    /**
     * @param store  the application's fence store
     * @param issuer its token issuer, {@code null} when none
     */
    public FencingHealthIndicator(FenceStore store, TokenIssuer issuer) {
        this.store = Objects.requireNonNull(store, "store");
        this.issuer = issuer;
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
            store.verify();
            if (JdbcParts.isJdbc(store)) {
                JdbcParts.probe(store);
            }
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

    private static String message(Throwable e) {
        String message = e.getMessage();
        return message == null ? e.getClass().getName() : e.getClass().getSimpleName() + ": " + message;
    }
}

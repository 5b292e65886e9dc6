package dev.fencing.boot.actuate;

import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.recovery.FenceAdmin;
import dev.fencing.store.FenceStore;
import org.springframework.util.ClassUtils;

import java.util.Map;
import java.util.OptionalLong;

/**
 * What the actuator parts read from fencing-jdbc's types. Loaded only when fencing-jdbc is on the classpath
 * ({@link #PRESENT}), so the health indicator and the endpoint work without it.
 */
final class JdbcParts {

    static final boolean PRESENT = ClassUtils.isPresent("dev.fencing.jdbc.JdbcFenceStore",
            JdbcParts.class.getClassLoader());

    /** The resource the health probe reads: a live query on the fence table, whatever verify() cached. */
    static final String PROBE_RESOURCE = "fencing.health.probe";

    private JdbcParts() {
    }

    static boolean isJdbc(FenceStore store) {
        return PRESENT && Jdbc.isJdbc(store);
    }

    static boolean isJdbc(TokenIssuer issuer) {
        return PRESENT && Jdbc.isJdbc(issuer);
    }

    /** Adds the table (and lock timeout) of a JDBC store to {@code details}. */
    static void describe(FenceStore store, Map<String, Object> details) {
        Jdbc.describe(store, details);
    }

    static void describe(TokenIssuer issuer, Map<String, Object> details) {
        Jdbc.describe(issuer, details);
    }

    /** A live read of the fence table: fails when the table is gone or the database does not answer. */
    static void probe(FenceStore store) {
        Jdbc.maxSeen(store, PROBE_RESOURCE);
    }

    static OptionalLong maxSeen(FenceStore store, String resource) {
        return Jdbc.maxSeen(store, resource);
    }

    /** The administrative side of a JDBC store. */
    static FenceAdmin admin(FenceStore store) {
        return Jdbc.admin(store);
    }

    /** The code that links against fencing-jdbc. */
    private static final class Jdbc {

        static boolean isJdbc(FenceStore store) {
            return store instanceof JdbcFenceStore;
        }

        static boolean isJdbc(TokenIssuer issuer) {
            return issuer instanceof JdbcTokenIssuer;
        }

        static void describe(FenceStore store, Map<String, Object> details) {
            JdbcFenceStore jdbc = (JdbcFenceStore) store;
            details.put("database", jdbc.dialect().name()); // two routes' stores differ here, if nowhere else
            details.put("table", jdbc.table());
            details.put("lockTimeout", String.valueOf(jdbc.lockTimeout()));
            if (jdbc.checksAtCommit()) {
                details.put("checkAtCommit", true);
            }
            if (jdbc.maxAdvance() != dev.fencing.rule.FenceRule.UNBOUNDED) {
                details.put("maxAdvance", jdbc.maxAdvance()); // instances configured alike judge alike: compare them
            }
        }

        static void describe(TokenIssuer issuer, Map<String, Object> details) {
            JdbcTokenIssuer jdbc = (JdbcTokenIssuer) issuer;
            details.put("table", jdbc.table());
            details.put("leaseTime", String.valueOf(jdbc.leaseTime()));
        }

        static OptionalLong maxSeen(FenceStore store, String resource) {
            return new JdbcFenceAdmin((JdbcFenceStore) store).maxSeen(resource);
        }

        static FenceAdmin admin(FenceStore store) {
            return new JdbcFenceAdmin((JdbcFenceStore) store);
        }
    }
}

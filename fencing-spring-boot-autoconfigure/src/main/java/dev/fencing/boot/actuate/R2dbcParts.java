package dev.fencing.boot.actuate;

import dev.fencing.r2dbc.R2dbcFenceStore;
import org.springframework.util.ClassUtils;

import java.util.Map;

/**
 * What the actuator parts read from fencing-r2dbc's store. Loaded only when fencing-r2dbc is on the classpath
 * ({@link #PRESENT}), so the health indicator and the endpoint work without it.
 */
final class R2dbcParts {

    static final boolean PRESENT = ClassUtils.isPresent("dev.fencing.r2dbc.R2dbcFenceStore",
            R2dbcParts.class.getClassLoader());

    private R2dbcParts() {
    }

    static boolean isR2dbc(Object store) {
        return PRESENT && R2dbc.isR2dbc(store);
    }

    /** Adds the table, database and lock timeout of an R2DBC store to {@code details}. */
    static void describe(Object store, Map<String, Object> details) {
        R2dbc.describe(store, details);
    }

    /** A live read of the fence table: fails when the table is gone or the database does not answer. */
    static void probe(Object store) {
        R2dbc.probe(store);
    }

    /** The code that links against fencing-r2dbc. */
    private static final class R2dbc {

        static boolean isR2dbc(Object store) {
            return store instanceof R2dbcFenceStore;
        }

        static void describe(Object store, Map<String, Object> details) {
            R2dbcFenceStore r2dbc = (R2dbcFenceStore) store;
            details.put("table", r2dbc.table());
            details.put("database", r2dbc.dialect().name());
            details.put("lockTimeout", String.valueOf(r2dbc.lockTimeout()));
        }

        static void probe(Object store) {
            ((R2dbcFenceStore) store).inventory().resources(null, 1); // one row by the key's index
        }
    }
}

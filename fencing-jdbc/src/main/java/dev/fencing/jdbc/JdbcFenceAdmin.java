package dev.fencing.jdbc;

import java.sql.Types;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Administrative tasks on the table of a {@link JdbcFenceStore}: reading a resource's committed max_seen, and raising
 * it to a floor known from elsewhere. Works on the store's table, data source and transaction manager, and verifies
 * the table first as the store does; the store itself only checks tokens.
 *
 * <pre>{@code
 * JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
 * admin.raiseFloor("accounts:42", lastTokenOfTheOldLockService);
 * }</pre>
 */
public final class JdbcFenceAdmin {

    private final JdbcFenceStore store;
    private final String maxSeenSql;

    /** Administers the table of {@code store}. */
    public JdbcFenceAdmin(JdbcFenceStore store) {
        this.store = Objects.requireNonNull(store, "store");
        this.maxSeenSql = store.dialect().maxSeenSql(store.table());
    }

    /** The committed max_seen of {@code resource}, empty when it never accepted a token. */
    public OptionalLong maxSeen(String resource) {
        store.verifyTable();
        Long value = store.jdbc().query(maxSeenSql, rs -> rs.next() ? rs.getLong(1) : null, resource);
        return value == null ? OptionalLong.empty() : OptionalLong.of(value);
    }

    /**
     * Raises max_seen of {@code resource} to at least {@code value}, with no holder, so that tokens up to and
     * including {@code value} are rejected; never lowers it. For restoring a floor known from elsewhere (for
     * example the last token a previous lock service issued). Joins the caller's transaction on the store's
     * transaction manager, or runs in one of its own.
     */
    public void raiseFloor(String resource, long value) {
        if (resource == null || resource.isBlank()) {
            throw new IllegalArgumentException("resource must not be blank");
        }
        if (value <= 0) {
            throw new IllegalArgumentException("floor for resource '" + resource + "' must be positive, was " + value);
        }
        store.verifyTable();
        store.transactions().executeWithoutResult(status -> store.jdbc().query(store.checkSql(), ps -> {
            ps.setString(1, resource);
            ps.setLong(2, value);
            ps.setNull(3, Types.VARCHAR);
        }, rs -> null));
    }
}

package dev.fencing.jdbc;

import dev.fencing.recovery.FenceAdmin;
import dev.fencing.recovery.FenceInventory;

import java.sql.Types;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Administrative tasks on the table of a {@link JdbcFenceStore}: reading a resource's committed max_seen, raising
 * it to a floor known from elsewhere, listing the resources and the highest max_seen ({@link FenceInventory}, for
 * the floor raise after a restore and the issuer offset's startup check), and lowering it (the raw step of {@link dev.fencing.recovery.MaxSeenReset},
 * which operators use). Works on the store's table, data source and transaction manager, and verifies
 * the table first as the store does; the store itself only checks tokens.
 *
 * <pre>{@code
 * JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
 * admin.raiseFloor("accounts:42", lastTokenOfTheOldLockService);
 * }</pre>
 */
public final class JdbcFenceAdmin implements FenceAdmin, FenceInventory {

    private final JdbcFenceStore store;
    private final String maxSeenSql;

    /** Administers the table of {@code store}. */
    public JdbcFenceAdmin(JdbcFenceStore store) {
        this.store = Objects.requireNonNull(store, "store");
        this.maxSeenSql = store.dialect().maxSeenSql(store.table());
    }

    /** The committed max_seen of {@code resource}, empty when it never accepted a token. */
    @Override
    public OptionalLong maxSeen(String resource) {
        store.verifyTable();
        Long value = store.jdbc().query(maxSeenSql, rs -> rs.next() ? rs.getLong(1) : null, resource);
        return value == null ? OptionalLong.empty() : OptionalLong.of(value);
    }

    /** {@inheritDoc} Keyset pages ({@code resource > ?}) in the database's order of the resource column. */
    @Override
    public List<String> resources(String after, int limit) {
        FenceInventory.checkLimit(limit);
        store.verifyTable();
        JdbcDialect dialect = store.dialect();
        String sql = dialect.resourcesSql(store.table(), after != null, limit);
        return after == null ? store.jdbc().queryForList(sql, String.class)
                : store.jdbc().queryForList(sql, String.class, after);
    }

    @Override
    public OptionalLong highestMaxSeen() {
        store.verifyTable();
        Long value = store.jdbc().queryForObject(store.dialect().highestMaxSeenSql(store.table()), Long.class);
        return value == null ? OptionalLong.empty() : OptionalLong.of(value);
    }

    /**
     * Raises max_seen of {@code resource} to at least {@code value}, with no holder, so that tokens up to and
     * including {@code value} are rejected; never lowers it. For restoring a floor known from elsewhere (for
     * example the last token a previous lock service issued). Joins the caller's transaction on the store's
     * transaction manager, or runs in one of its own. Not subject to the store's {@code maxAdvance}.
     */
    @Override
    public void raiseFloor(String resource, long value) {
        if (resource == null || resource.isBlank()) {
            throw new IllegalArgumentException("resource must not be blank");
        }
        if (value <= 0) {
            throw new IllegalArgumentException("floor for resource '" + resource + "' must be positive, was " + value);
        }
        store.verifyTable();
        store.transactions().executeWithoutResult(status -> store.jdbc().query(store.floorSql(), ps -> {
            ps.setString(1, resource);
            ps.setLong(2, value);
            ps.setNull(3, Types.VARCHAR);
        }, rs -> null));
    }

    /**
     * {@inheritDoc} Locks the resource's fence row ({@code SELECT ... FOR UPDATE}, waiting for a fenced transaction
     * that holds it), then updates it (or, for 0, deletes it), in the caller's transaction on the store's transaction
     * manager or in one of its own.
     */
    @Override
    public long lowerMaxSeen(String resource, long floor) {
        FenceAdmin.checkLowering(resource, floor);
        store.verifyTable();
        JdbcDialect dialect = store.dialect();
        String table = store.table();
        Long previous = store.transactions().execute(status -> {
            Long current = store.jdbc().query(dialect.lockMaxSeenSql(table),
                    rs -> rs.next() ? rs.getLong(1) : null, resource);
            if (current == null) {
                throw FenceAdmin.unknownResource(resource);
            }
            if (floor > current) {
                throw FenceAdmin.notLowering(resource, floor, current);
            }
            if (floor == 0) {
                store.jdbc().update(dialect.forgetSql(table), resource);
            } else {
                store.jdbc().update(dialect.lowerSql(table), floor, resource);
            }
            return current;
        });
        return previous;
    }
}

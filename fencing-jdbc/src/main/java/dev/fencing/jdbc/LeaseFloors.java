package dev.fencing.jdbc;

import dev.fencing.token.FencingToken;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;

import java.util.List;

/**
 * The family floors of a lease table, kept as rows of the table itself: the floor of family {@code accounts} is the
 * token of the row whose resource is {@link #KEY_PREFIX} followed by {@code accounts}. No resource can take such a
 * key (a lockable resource has no control character), so a floor row is never locked, taken or compacted as a lease.
 * Every method runs inside the caller's transaction. The same raise serves a resource's own row (a restore's floor).
 */
final class LeaseFloors {

    /** What a floor row's resource starts with: a control character, which no lockable resource contains. */
    static final String KEY_PREFIX = "\u0001";

    /** The longest family a floor row can hold: the resource column's width less the prefix. */
    static final int MAX_FAMILY_LENGTH = FencingToken.MAX_PART_LENGTH - KEY_PREFIX.length();

    private final JdbcTemplate jdbc;
    private final String ensureRowSql;
    private final String lockRowSql;
    private final String readFloorSql;
    private final String raiseSql;

    LeaseFloors(JdbcTemplate jdbc, LeaseDialect dialect, String table) {
        this.jdbc = jdbc;
        this.ensureRowSql = dialect.ensureRowSql(table);
        this.lockRowSql = dialect.lockRowSql(table);
        this.readFloorSql = dialect.readFloorSql(table);
        this.raiseSql = dialect.raiseTokenSql(table);
    }

    /** The key of {@code family}'s floor row. */
    static String key(String family) {
        return KEY_PREFIX + family;
    }

    /** The floor of {@code family} under a shared lock, the latest committed; 0 when it has none. */
    long read(String family) {
        List<Long> floor = jdbc.queryForList(readFloorSql, Long.class, key(family));
        return floor.isEmpty() ? 0 : floor.get(0);
    }

    /**
     * Raises {@code family}'s floor to at least {@code floor}, creating its row when missing; never lowers it. The
     * row is locked before it is inserted (as an acquire does), so that two raises do not deadlock on InnoDB's
     * shared-lock upgrade of an insert-if-absent.
     */
    void raise(String family, long floor) {
        raiseRow(key(family), floor);
    }

    /**
     * Raises the token of the row {@code key} (a resource's, or a family floor's) to at least {@code floor},
     * creating the row free when missing; never lowers it. Locks the row before inserting it, as {@link #raise}.
     */
    void raiseRow(String key, long floor) {
        if (jdbc.queryForList(lockRowSql, key).isEmpty()) {
            try {
                jdbc.update(ensureRowSql, key);
            } catch (DuplicateKeyException raced) {
                // inserted by another transaction meanwhile (H2's MERGE): it exists now
            }
        }
        jdbc.update(raiseSql, floor, key, floor);
    }
}

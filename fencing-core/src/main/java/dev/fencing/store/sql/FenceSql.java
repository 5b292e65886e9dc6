package dev.fencing.store.sql;

import dev.fencing.retention.ResourceFamily;
import dev.fencing.rule.FenceRule;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Internal: for the store modules (fencing-jdbc, fencing-r2dbc); not an API, and it may change in any release. The
 * SQL of the fence table, written once per database: the single statement that checks a token against max_seen,
 * advances it when the rule accepts, takes the row lock that serializes fenced writes to the resource until commit,
 * and returns the row as it now stands; and the schema script ({@code dev/fencing/store/sql/schema-<db>.sql}, one
 * {@code CREATE TABLE IF NOT EXISTS} for the default table {@value #DEFAULT_TABLE}). Statements use {@code ?}
 * markers; table names must be validated by the caller before they reach these templates.
 */
public enum FenceSql {

    /**
     * PostgreSQL 9.5+: {@code INSERT ... ON CONFLICT DO UPDATE ... RETURNING}. The insert path (the resource has no
     * row when the statement inserts) inserts the token judged against the family floor row (joined by its key, the
     * fourth parameter); the update path (it has one) judges the token against the row's own max_seen, reading the
     * presented token and holder from a one-row sub-select of its own (the fifth to seventh parameters, the token,
     * holder and floor key again: the row proposed for insertion holds the floor when the floor refused the token, so
     * it cannot carry the token to the update path; the floor key serves a bound on one advance only). Which path
     * runs is decided by the unique index, never by what the statement's snapshot read: a row deleted meanwhile
     * leaves a check on the insert path, judged against the floor its snapshot read. After a reset to 0, which
     * changes no floor, that is the floor at any isolation level; after compaction, which raises floors, only in READ
     * COMMITTED (a check queued behind compaction's table lock takes its snapshot after it). A {@code null} holder (a
     * raised floor) advances max_seen as a token does.
     */
    POSTGRESQL("""
            INSERT INTO %1$s AS f (resource, max_seen, holder, updated_at)
            SELECT v.resource,
                   CASE WHEN fl.max_seen IS NULL OR (v.token > fl.max_seen%4$s) THEN v.token ELSE fl.max_seen END,
                   CASE WHEN fl.max_seen IS NULL OR (v.token > fl.max_seen%4$s) THEN v.holder END,
                   CURRENT_TIMESTAMP
            FROM (VALUES (CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT)))
                     AS v (resource, token, holder, floor_key)
                   LEFT JOIN %1$s fl ON fl.resource = v.floor_key
            ON CONFLICT (resource) DO UPDATE SET (updated_at, holder, max_seen) = (
                SELECT CASE WHEN (f.max_seen < p.token%2$s) OR (f.max_seen = p.token AND f.holder = p.holder)
                            THEN EXCLUDED.updated_at ELSE f.updated_at END,
                       CASE WHEN f.max_seen < p.token%2$s THEN p.holder ELSE f.holder END,
                       CASE WHEN f.max_seen < p.token%2$s THEN p.token ELSE f.max_seen END
                FROM (VALUES (CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT))) AS p (token, holder, floor_key))
            RETURNING max_seen, holder""",
            " AND p.token - GREATEST(f.max_seen, COALESCE((SELECT b.max_seen FROM %1$s b"
                    + " WHERE b.resource = p.floor_key), 0)) <= %2$d",
            " AND (fl.max_seen = 0 OR v.token - fl.max_seen <= %2$d)", """
            INSERT INTO %1$s AS f (resource, max_seen, holder, updated_at)
            VALUES (CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS TEXT), CURRENT_TIMESTAMP)
            ON CONFLICT (resource) DO UPDATE SET
                updated_at = CASE WHEN (f.max_seen < EXCLUDED.max_seen%2$s)
                                    OR (f.max_seen = EXCLUDED.max_seen AND f.holder = EXCLUDED.holder)
                                  THEN EXCLUDED.updated_at ELSE f.updated_at END,
                holder     = CASE WHEN f.max_seen < EXCLUDED.max_seen%2$s THEN EXCLUDED.holder ELSE f.holder END,
                max_seen   = CASE WHEN f.max_seen < EXCLUDED.max_seen%2$s THEN EXCLUDED.max_seen ELSE f.max_seen END
            RETURNING max_seen, holder""", " AND EXCLUDED.max_seen - f.max_seen <= %2$d"),

    /**
     * MariaDB 10.5+: {@code INSERT ... SELECT ... ON DUPLICATE KEY UPDATE ... RETURNING}. The presented values are a
     * derived table the update path reads (the insert path inserts the token judged against the family floor row).
     * Assignments run left to right and see the columns already assigned, so the conditions come before the columns
     * they read are changed. The text columns use {@code utf8mb4_nopad_bin}: the server default
     * ({@code utf8mb4_general_ci}) would make {@code a}/{@code A}, {@code u}/{@code ü} and {@code x}/{@code "x "} one
     * row.
     */
    MARIADB("""
            INSERT INTO %1$s (resource, max_seen, holder, updated_at)
            SELECT v.fence_resource,
                   IF(fl.max_seen IS NULL OR (v.fence_token > fl.max_seen%4$s), v.fence_token, fl.max_seen),
                   IF(fl.max_seen IS NULL OR (v.fence_token > fl.max_seen%4$s), v.fence_holder, NULL),
                   CURRENT_TIMESTAMP(6)
            FROM (SELECT ? AS fence_resource, CAST(? AS SIGNED) AS fence_token, ? AS fence_holder,
                         ? AS fence_floor) v
            LEFT JOIN %1$s fl ON fl.resource = v.fence_floor
            ON DUPLICATE KEY UPDATE
                updated_at = IF((%1$s.max_seen < v.fence_token%2$s)
                                OR (%1$s.max_seen = v.fence_token AND %1$s.holder = v.fence_holder),
                                VALUES(updated_at), %1$s.updated_at),
                holder     = IF(%1$s.max_seen < v.fence_token%2$s, v.fence_holder, %1$s.holder),
                max_seen   = IF(%1$s.max_seen < v.fence_token%2$s, v.fence_token, %1$s.max_seen)
            RETURNING %1$s.max_seen, %1$s.holder""",
            " AND v.fence_token - GREATEST(%1$s.max_seen, COALESCE(fl.max_seen, 0)) <= %2$d",
            " AND (fl.max_seen = 0 OR v.fence_token - fl.max_seen <= %2$d)", """
            INSERT INTO %1$s (resource, max_seen, holder, updated_at)
            VALUES (?, ?, ?, CURRENT_TIMESTAMP(6))
            ON DUPLICATE KEY UPDATE
                updated_at = IF((max_seen < VALUES(max_seen)%2$s)
                                OR (max_seen = VALUES(max_seen) AND holder = VALUES(holder)),
                                VALUES(updated_at), updated_at),
                holder     = IF(max_seen < VALUES(max_seen)%2$s, VALUES(holder), holder),
                max_seen   = IF(max_seen < VALUES(max_seen)%2$s, VALUES(max_seen), max_seen)
            RETURNING max_seen, holder""", " AND VALUES(max_seen) - max_seen <= %2$d"),

    /** H2 2.x: {@code MERGE ... USING} read back through {@code FINAL TABLE}; the source carries the family floor. */
    H2("""
            SELECT max_seen, holder FROM FINAL TABLE (
                MERGE INTO %1$s f
                USING (SELECT v.resource, v.token, v.holder, fl.max_seen AS floor
                       FROM (VALUES (CAST(? AS VARCHAR(256)), CAST(? AS BIGINT), CAST(? AS VARCHAR(256)),
                                     CAST(? AS VARCHAR(256)))) v (resource, token, holder, floor_key)
                       LEFT JOIN %1$s fl ON fl.resource = v.floor_key) s
                ON f.resource = s.resource
                WHEN MATCHED THEN UPDATE SET
                    updated_at = CASE WHEN (f.max_seen < s.token%2$s)
                                        OR (f.max_seen = s.token AND f.holder = s.holder)
                                      THEN CURRENT_TIMESTAMP ELSE f.updated_at END,
                    holder     = CASE WHEN f.max_seen < s.token%2$s THEN s.holder ELSE f.holder END,
                    max_seen   = CASE WHEN f.max_seen < s.token%2$s THEN s.token ELSE f.max_seen END
                WHEN NOT MATCHED THEN INSERT (resource, max_seen, holder, updated_at)
                    VALUES (s.resource,
                            CASE WHEN s.floor IS NULL OR (s.token > s.floor%4$s) THEN s.token ELSE s.floor END,
                            CASE WHEN s.floor IS NULL OR (s.token > s.floor%4$s) THEN s.holder END,
                            CURRENT_TIMESTAMP)
            )""",
            " AND s.token - GREATEST(f.max_seen, COALESCE(s.floor, 0)) <= %2$d",
            " AND (s.floor = 0 OR s.token - s.floor <= %2$d)", """
            SELECT max_seen, holder FROM FINAL TABLE (
                MERGE INTO %1$s f
                USING (VALUES (CAST(? AS VARCHAR(256)), CAST(? AS BIGINT), CAST(? AS VARCHAR(256))))
                      s (resource, token, holder)
                ON f.resource = s.resource
                WHEN MATCHED THEN UPDATE SET
                    updated_at = CASE WHEN (f.max_seen < s.token%2$s)
                                        OR (f.max_seen = s.token AND f.holder = s.holder)
                                      THEN CURRENT_TIMESTAMP ELSE f.updated_at END,
                    holder     = CASE WHEN f.max_seen < s.token%2$s THEN s.holder ELSE f.holder END,
                    max_seen   = CASE WHEN f.max_seen < s.token%2$s THEN s.token ELSE f.max_seen END
                WHEN NOT MATCHED THEN INSERT (resource, max_seen, holder, updated_at)
                    VALUES (s.resource, s.token, s.holder, CURRENT_TIMESTAMP)
            )""", " AND s.token - f.max_seen <= %2$d");

    /**
     * PostgreSQL: the check-and-advance statement for a check sent with {@code COMMIT}
     * ({@link #checksAtCommitSql}); {@link #POSTGRESQL}'s, but a rejection raises an error instead of returning the
     * row, so that the transaction aborts inside the server before the {@code COMMIT} after it runs. The error is a
     * failed cast (SQLSTATE 22P02) of a text carrying {@value #REJECTED_AT_COMMIT}, the statement's place in the
     * batch (%3$d) and max_seen (for a resource without a row, its family floor): it reads a row, so it is never
     * folded at plan time. The update path raises in its assignment; the insert path cannot (the row proposed for
     * insertion is computed before the unique index decides the path), so a refused insert, the row holding the
     * floor and no holder, raises in {@code RETURNING}: a row a check leaves has no holder only then, since every
     * token has one.
     */
    private static final String POSTGRESQL_AT_COMMIT = """
            INSERT INTO %1$s AS f (resource, max_seen, holder, updated_at)
            SELECT v.resource,
                   CASE WHEN fl.max_seen IS NULL OR (v.token > fl.max_seen%4$s) THEN v.token ELSE fl.max_seen END,
                   CASE WHEN fl.max_seen IS NULL OR (v.token > fl.max_seen%4$s) THEN v.holder END,
                   CURRENT_TIMESTAMP
            FROM (VALUES (CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT)))
                     AS v (resource, token, holder, floor_key)
                   LEFT JOIN %1$s fl ON fl.resource = v.floor_key
            ON CONFLICT (resource) DO UPDATE SET (updated_at, holder, max_seen) = (
                SELECT CASE WHEN (f.max_seen < p.token%2$s) OR (f.max_seen = p.token AND f.holder = p.holder)
                            THEN EXCLUDED.updated_at ELSE f.updated_at END,
                       CASE WHEN f.max_seen < p.token%2$s THEN p.holder ELSE f.holder END,
                       CASE WHEN f.max_seen < p.token%2$s THEN p.token
                            WHEN f.max_seen = p.token AND f.holder = p.holder THEN f.max_seen
                            ELSE CAST('fencing-rejected check=%3$d max_seen=' || f.max_seen AS BIGINT) END
                FROM (VALUES (CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT))) AS p (token, holder, floor_key))
            RETURNING CASE WHEN f.holder IS NULL
                           THEN CAST('fencing-rejected check=%3$d max_seen=' || f.max_seen AS BIGINT) END""";

    /**
     * What no resource contains (resources have no control characters): the last character of a family floor row's
     * key, {@code family + U+001F} ({@link #familyFloorKey(String)}).
     */
    public static final char FLOOR_MARKER = '\u001f';

    /**
     * The key of {@code family}'s floor row in the fence table: the family followed by {@link #FLOOR_MARKER}. The floor
     * rows live in the fence table itself (max_seen is the floor, no holder), so the highest token the table ever saw
     * is still its highest max_seen, and a backup or lock of the table covers them. A floor row holding 0 is no floor
     * (tokens are positive; a bound on one advance does not apply to it either): MariaDB's stores create one for each
     * family they check ({@link #floorRowSql}).
     */
    public static String familyFloorKey(String family) {
        return family + FLOOR_MARKER;
    }

    /**
     * The fourth parameter of the check for {@code resource}: the key of its family's floor row, or {@code null} when
     * it has no family ({@link ResourceFamily}) or is itself a family's floor key (the raise of a floor row is judged
     * against that row alone: the floor of {@code orders:eu} is not its parent family {@code orders}'s).
     */
    public static String floorKeyOf(String resource) {
        if (isFloorKey(resource)) {
            return null;
        }
        String family = ResourceFamily.of(resource);
        return family == null ? null : familyFloorKey(family);
    }

    /** Whether {@code resource} is the key of a family floor row, not a resource. */
    public static boolean isFloorKey(String resource) {
        return !resource.isEmpty() && resource.charAt(resource.length() - 1) == FLOOR_MARKER;
    }

    /**
     * The family whose floor row {@code key} is ({@link #familyFloorKey}'s inverse), or {@code null} for a resource.
     */
    public static String familyOfFloorKey(String key) {
        return isFloorKey(key) ? key.substring(0, key.length() - 1) : null;
    }

    /**
     * PostgreSQL: how table {@code ?} is stored ({@code relpersistence}: {@code p} durable, {@code u} UNLOGGED,
     * {@code t} TEMPORARY), the least durable of the table and its partitions (or children), which hold its rows; no
     * row when it does not exist; read by the stores' startup checks ({@link #notDurable}).
     */
    public static final String PERSISTENCE_SQL = "WITH RECURSIVE t(oid) AS (SELECT CAST(to_regclass(?) AS oid) "
            + "UNION SELECT i.inhrelid FROM pg_inherits i JOIN t ON i.inhparent = t.oid) "
            + "SELECT CAST(c.relpersistence AS TEXT) FROM pg_class c JOIN t ON c.oid = t.oid "
            + "ORDER BY CASE c.relpersistence WHEN 'p' THEN 1 ELSE 0 END LIMIT 1";

    /**
     * What {@link #PERSISTENCE_SQL} answered, as a refusal's words ("is UNLOGGED on PostgreSQL: ..."), or {@code null}
     * for a durable table or none: an UNLOGGED table is emptied by crash recovery (and never replicated), a TEMPORARY
     * one ends with its session, and with either its rows go.
     */
    public static String notDurable(String persistence) {
        if (persistence == null || persistence.equals("p")) {
            return null;
        }
        return persistence.equals("u")
                ? "is UNLOGGED on PostgreSQL (itself or a partition): crash recovery empties it and replicas never "
                + "receive it"
                : "is a TEMPORARY table on PostgreSQL: it lives only in the session that created it";
    }

    /**
     * The fix when a statement on {@code table} failed for lack of a privilege or on a read-only connection, by the
     * SQL state ({@code 25006}, {@code 42501}) and MariaDB's error codes; {@code null} for any other failure (a table
     * to create or recreate).
     */
    public static String deniedFix(String sqlState, int errorCode, String table) {
        if ("25006".equals(sqlState) || errorCode == 1792 || errorCode == 1290) {
            return "the connection is read-only; give the fence a read-write connection (no read-only pool, replica "
                    + "or default_transaction_read_only)";
        }
        if ("42501".equals(sqlState) || errorCode == 1142 || errorCode == 1143 || errorCode == 1044) {
            return "grant the application's database user SELECT, INSERT, UPDATE and DELETE on " + table
                    + " (DELETE for compaction and the admin reset)";
        }
        return null;
    }

    /** The marker in the error a rejected check at commit raises ({@link #rejectedAtCommit(String)} reads it). */
    public static final String REJECTED_AT_COMMIT = "fencing-rejected";

    private static final Pattern REJECTION = Pattern.compile(
            REJECTED_AT_COMMIT + " check=(\\d+) max_seen=(-?\\d+)");

    /** The table name the schema scripts create. */
    public static final String DEFAULT_TABLE = "fencing_max_seen";

    private static final String CREATE = "CREATE TABLE IF NOT EXISTS ";

    private static final Pattern TABLE_NAME = Pattern.compile(
            "[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    /**
     * Whether {@code table} may reach these templates: letters, digits and underscores, optionally schema-qualified
     * ({@code schema.table}), at most 63 each.
     */
    public static boolean isValidTableName(String table) {
        return table != null && TABLE_NAME.matcher(table).matches();
    }

    private final String check;
    private final String advanceBound;
    private final String floorBound;
    private final String familylessCheck;
    private final String familylessBound;
    private volatile String createStatement;

    FenceSql(String check, String advanceBound, String floorBound, String familylessCheck, String familylessBound) {
        this.check = check;
        this.advanceBound = advanceBound;
        this.floorBound = floorBound;
        this.familylessCheck = familylessCheck;
        this.familylessBound = familylessBound;
    }

    private String bound(String template, String table, long maxAdvance) {
        return maxAdvance == FenceRule.UNBOUNDED ? "" : template.formatted(table, maxAdvance);
    }

    /**
     * A statement that brings column {@code column} of a fence or lease table created by an older or hand-written
     * DDL to the definition this library needs: {@code BIGINT} for {@code max_seen} and {@code token}, a
     * 256-character variable-length text with exact comparison for the others ({@code resource}, {@code holder}; on
     * PostgreSQL the database's default collation, always deterministic, as the shipped script has it; on MariaDB
     * binary, no-pad). Startup errors show it; the table name must have been validated.
     */
    public String alterColumnSql(String table, String column) {
        boolean number = column.equals("max_seen") || column.equals("token");
        boolean notNull = number || column.equals("resource");
        return switch (this) {
            case POSTGRESQL -> "ALTER TABLE " + table + " ALTER COLUMN " + column + " TYPE "
                    + (number ? "BIGINT" : "VARCHAR(256) COLLATE \"default\"");
            case MARIADB -> "ALTER TABLE " + table + " MODIFY " + column + " "
                    + (number ? "BIGINT" : "VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin")
                    + (notNull ? " NOT NULL" : " NULL");
            case H2 -> "ALTER TABLE " + table + " ALTER COLUMN " + column + " SET DATA TYPE "
                    + (number ? "BIGINT" : "VARCHAR(256)");
        };
    }

    /** The committed max_seen of a resource. Parameter: resource; returns (max_seen), no row when there is none. */
    public String maxSeenSql(String table) {
        return "SELECT max_seen FROM " + table + " WHERE resource = ?";
    }

    /**
     * What a store on {@code table} says at build time of a {@code lockTimeout} this database cannot apply as given, or
     * {@code null}: MariaDB's lock wait bounds take whole seconds, rounded up (a 200 ms bound waited a second in a
     * trial, unsaid).
     */
    public String lockTimeoutRounding(String store, String table, java.time.Duration lockTimeout) {
        if (this != MARIADB || lockTimeout.toNanos() % 1_000_000_000L == 0) {
            return null;
        }
        return store + " on table '" + table + "': lockTimeout " + lockTimeout.toMillis() + " ms waits up to "
                + (lockTimeout.toSeconds() + 1) + " s on MariaDB, whose lock wait bounds take whole seconds (rounded "
                + "up); give a whole number of seconds to say what it waits";
    }

    /**
     * A page of resources with a max_seen, in the table's order of resource names, after a given one; without the
     * floor rows holding 0, which are no floor ({@link #familyFloorKey}). Parameter: the resource to start after
     * (without {@code after}: none); returns (resource).
     */
    public String resourcesSql(String table, boolean after, int limit) {
        return "SELECT resource FROM " + table + " WHERE max_seen > 0" + (after ? " AND resource > ?" : "")
                + " ORDER BY resource LIMIT " + limit;
    }

    /** The highest max_seen of the table; returns (max), NULL when the table is empty. */
    public String highestMaxSeenSql(String table) {
        return "SELECT MAX(max_seen) FROM " + table;
    }

    /**
     * The check-and-advance statement on {@code table}; parameters: those of {@link #checkParameters} (resource,
     * token value, holder, the key of the resource's family floor, and on PostgreSQL token, holder and key again);
     * returns one row (max_seen, holder). A resource without a row is judged against its family's floor row as if that
     * were its own with no holder: a token above it inserts the resource's row, any other inserts a row holding the
     * floor and no holder (locked until commit like any row), which the caller's rule refuses; without a floor the
     * token inserts its row whatever its value. With a bound on one advance (not {@link FenceRule#UNBOUNDED}),
     * evaluated by the same statement: a token more than {@code maxAdvance} above max_seen (or above the floor) leaves
     * max_seen as it is, so the row returned has a max_seen below the token. On a resource's own row the bound counts
     * from the higher of its max_seen and its family's floor: the issuer's next token for it clears the floor, which
     * compaction raised to the highest max_seen of the family's folded resources, however far below its own row is.
     */
    public String checkSql(String table, long maxAdvance) {
        return check.formatted(table, bound(advanceBound, table, maxAdvance), 0,
                bound(floorBound, table, maxAdvance));
    }

    /**
     * {@link #checkSql(String, long)} bounded to wait at most {@code lockTimeout} for the resource's row lock when
     * the database can bound one statement by itself (MariaDB's {@code SET STATEMENT innodb_lock_wait_timeout=n
     * FOR}, in whole seconds rounded up); otherwise the plain statement, bounded by
     * {@link #swapLockTimeoutSql(String)} around it.
     */
    public String checkSql(String table, Duration lockTimeout, long maxAdvance) {
        return boundedByItself(checkSql(table, maxAdvance), lockTimeout);
    }

    /**
     * The check-and-advance statement for a resource without a family ({@link #floorKeyOf(String)} is
     * {@code null}): {@link #checkSql(String, long)}'s verdicts without reading the table for a floor, since such a
     * resource has none (a resource without a row inserts its token, whatever its value). Parameters:
     * {@link #familylessCheckParameters}; returns one row (max_seen, holder).
     */
    public String familylessCheckSql(String table, long maxAdvance) {
        return familylessCheck.formatted(table, bound(familylessBound, table, maxAdvance));
    }

    /** {@link #familylessCheckSql(String, long)}, bounded as {@link #checkSql(String, Duration, long)} is. */
    public String familylessCheckSql(String table, Duration lockTimeout, long maxAdvance) {
        return boundedByItself(familylessCheckSql(table, maxAdvance), lockTimeout);
    }

    /**
     * {@code statement} bounded to wait at most {@code lockTimeout} for the locks it takes when the database can bound
     * one statement by itself (MariaDB: {@code SET STATEMENT innodb_lock_wait_timeout=n, lock_wait_timeout=n FOR}, in
     * whole seconds rounded up: row locks, and the table's metadata lock behind {@code LOCK TABLES} or a DDL);
     * elsewhere {@code statement} as it is, to be bounded around it.
     */
    public String boundedByItself(String statement, Duration lockTimeout) {
        if (this == MARIADB) {
            long seconds = Math.max(1, (lockTimeout.toMillis() + 999) / 1000);
            return "SET STATEMENT innodb_lock_wait_timeout=" + seconds + ", lock_wait_timeout=" + seconds + " FOR "
                    + statement;
        }
        return statement;
    }

    /**
     * The parameters of {@link #familylessCheckSql}: resource, token value, holder.
     *
     * @throws IllegalArgumentException when {@code resource} has a family: its check must read the family's floor
     */
    public static Object[] familylessCheckParameters(String resource, long token, String holder) {
        if (ResourceFamily.has(resource)) {
            throw new IllegalArgumentException("Resource '" + resource + "' has a family ("
                    + ResourceFamily.of(resource) + "): its check must read the family's floor, use checkSql");
        }
        return new Object[] {resource, token, holder};
    }

    /**
     * Whether this database can send its checks in the round trip of {@code COMMIT} ({@link #checksAtCommitSql}):
     * PostgreSQL only. MariaDB cannot keep the guarantee: a statement in the body that commits implicitly (DDL,
     * {@code TRUNCATE}, {@code LOCK TABLES}, {@code START TRANSACTION}) would commit the body's writes before a check
     * sent with {@code COMMIT} could refuse them.
     */
    public boolean checksAtCommit() {
        return this == POSTGRESQL;
    }

    /**
     * PostgreSQL: one text of {@code checks} check-and-advance statements followed by {@code COMMIT}, preceded by
     * {@code SET LOCAL lock_timeout} to {@code lockTimeout} (for example {@code 5000ms}). Parameters: those of
     * {@link #atCommitParameters}, for each check in turn. A rejected check raises an error
     * ({@link #rejectedAtCommit(String)} reads which check and max_seen from its message): the statements after it,
     * {@code COMMIT} included, do not run, and the transaction is left aborted.
     *
     * @throws UnsupportedOperationException for another database ({@link #checksAtCommit()})
     */
    public String checksAtCommitSql(String table, String lockTimeout, long maxAdvance, int checks) {
        return checksAtCommitSql(table, lockTimeout, maxAdvance, checks, true);
    }

    /**
     * {@link #checksAtCommitSql(String, String, long, int)}, or with {@code commit} false the same checks without
     * {@code COMMIT}, the connection's lock wait bound put back after them (for a transaction that commits later).
     */
    public String checksAtCommitSql(String table, String lockTimeout, long maxAdvance, int checks, boolean commit) {
        if (!checksAtCommit()) {
            throw new UnsupportedOperationException(this + " cannot check at commit");
        }
        if (checks < 1) {
            throw new IllegalArgumentException("checks must be at least 1, was " + checks);
        }
        String floor = bound(floorBound, table, maxAdvance);
        String value = lockTimeout.replace("'", "''");
        StringBuilder sql = new StringBuilder(commit ? "SET LOCAL lock_timeout = '" + value + "';\n"
                : swapInLockTimeout(lockTimeout));
        String bound = bound(advanceBound, table, maxAdvance); // the update paths read the token alike
        for (int i = 0; i < checks; i++) {
            sql.append(POSTGRESQL_AT_COMMIT.formatted(table, bound, i, floor)).append(";\n");
        }
        return sql.append(commit ? "COMMIT" : PUT_BACK_LOCK_TIMEOUT).toString();
    }

    /**
     * The parameters of {@link #checkSql}, in order: resource, token value, holder ({@code null} for a raised
     * floor), the key of the resource's family floor ({@link #floorKeyOf(String)}, {@code null} without a family);
     * PostgreSQL then token value, holder and floor key again, for its update path (whose bound on one advance counts
     * from the higher of max_seen and the family floor).
     */
    public Object[] checkParameters(String resource, long token, String holder) {
        String floorKey = floorKeyOf(resource);
        return this == POSTGRESQL ? new Object[] {resource, token, holder, floorKey, token, holder, floorKey}
                : new Object[] {resource, token, holder, floorKey};
    }

    /** The parameters of one check in {@link #checksAtCommitSql}, in order: those of {@link #checkParameters}. */
    public Object[] atCommitParameters(String resource, long token, String holder) {
        return checkParameters(resource, token, holder);
    }

    /**
     * PostgreSQL, for a driver that sends several statements as one text (JDBC): the query that swaps in
     * {@code lockTimeout} ({@link #swapInLockTimeoutSql}), {@link #checkSql(String, long)}, and a query that puts the
     * caller's {@code lock_timeout} back, in one text sent in one round trip; the check's row is the <em>second</em>
     * result. Three statements rather than {@link #restoringCheckSql}'s two: pgjdbc with {@code prepareThreshold=-1}
     * (binary results from the first execution) sends the last statement's result formats for every statement of the
     * text, which the server refuses unless their column counts match or the last has one column. When the check
     * fails, the rest does not run and the transaction is aborted (its settings with it).
     *
     * @throws UnsupportedOperationException for another database
     */
    public String boundedCheckSql(String table, String lockTimeout, long maxAdvance) {
        return bounded(checkSql(table, maxAdvance), lockTimeout);
    }

    /** {@link #boundedCheckSql}, of {@link #familylessCheckSql(String, long)}. */
    public String familylessBoundedCheckSql(String table, String lockTimeout, long maxAdvance) {
        return bounded(familylessCheckSql(table, maxAdvance), lockTimeout);
    }

    private String bounded(String check, String lockTimeout) {
        requirePostgreSql();
        return swapInLockTimeout(lockTimeout) + check + ";\n" + PUT_BACK_LOCK_TIMEOUT;
    }

    /**
     * PostgreSQL: the query that keeps the caller's {@code lock_timeout} in {@code fencing.lock_timeout} and sets
     * {@code lockTimeout} (for example {@code 5000ms}), both transaction-local; the statement before
     * {@link #restoringCheckSql}. It must be a statement of its own: a statement takes its table lock when it is
     * parsed, before any function in it runs, so a bound set inside the check would not bound the wait for the table
     * lock (behind compaction's, a DDL's or an operator's {@code LOCK TABLE}).
     *
     * @throws UnsupportedOperationException for another database
     */
    public String swapInLockTimeoutSql(String lockTimeout) {
        requirePostgreSql();
        String swap = swapInLockTimeout(lockTimeout);
        return swap.substring(0, swap.length() - 2); // without ";\n"
    }

    /**
     * PostgreSQL: {@link #checkSql(String, long)} whose {@code RETURNING} also puts back the caller's
     * {@code lock_timeout} kept by {@link #swapInLockTimeoutSql} (the statement before it), once the row lock is
     * taken: the check and the restore are one statement, the bound's two statements one fewer than a restore of its
     * own (one round trip fewer on R2DBC, whose drivers send one statement with parameters at a time).
     * Parameters as the check's; returns (max_seen, holder, the restored setting). When the check fails, the
     * transaction (or savepoint) is rolled back, and the settings with it.
     *
     * @throws UnsupportedOperationException for another database
     */
    public String restoringCheckSql(String table, long maxAdvance) {
        return restoring(checkSql(table, maxAdvance));
    }

    /** {@link #restoringCheckSql}, of {@link #familylessCheckSql(String, long)}. */
    public String restoringFamilylessCheckSql(String table, long maxAdvance) {
        return restoring(familylessCheckSql(table, maxAdvance));
    }

    private String restoring(String check) {
        requirePostgreSql();
        String returning = "RETURNING max_seen, holder";
        if (!check.endsWith(returning)) {
            throw new IllegalStateException("The PostgreSQL check statement no longer ends with '" + returning + "'");
        }
        return check + ", " + PUT_BACK;
    }

    private void requirePostgreSql() {
        if (this != POSTGRESQL) {
            throw new UnsupportedOperationException(this + " bounds its check's lock wait otherwise");
        }
    }

    /** PostgreSQL: how many swapped-in bounds are not put back yet in the transaction (0 when never set). */
    private static final String DEPTH = "CAST(COALESCE(NULLIF(current_setting('fencing.lock_depth', true), ''), '0') "
            + "AS INTEGER)";

    /**
     * PostgreSQL: keeps the caller's lock_timeout in a custom setting and sets {@code lockTimeout}; one query. Two
     * checks at once on one connection (two fenced calls zipped in a reactive transaction) swap twice before either
     * puts back: only the first swap keeps the setting (the second would keep the first's bound as the caller's), and
     * {@code fencing.lock_depth} counts the swaps not yet put back. Functions of a select list run left to right.
     */
    private static String swapInLockTimeout(String lockTimeout) {
        return "SELECT set_config('fencing.lock_timeout', CASE WHEN d.depth = 0 THEN current_setting('lock_timeout') "
                + "ELSE current_setting('fencing.lock_timeout') END, true), "
                + "set_config('fencing.lock_depth', CAST(d.depth + 1 AS TEXT), true), "
                + "set_config('lock_timeout', '" + lockTimeout.replace("'", "''") + "', true) "
                + "FROM (SELECT " + DEPTH + " AS depth) d;\n";
    }

    /**
     * PostgreSQL: the expressions that put back the lock_timeout {@link #swapInLockTimeout} kept, when this is the last
     * swap not yet put back (the bound stays for a check still to run), and count it off; left to right.
     */
    private static final String PUT_BACK = "set_config('lock_timeout', CASE WHEN " + DEPTH + " <= 1 THEN "
            + "current_setting('fencing.lock_timeout') ELSE current_setting('lock_timeout') END, true), "
            + "set_config('fencing.lock_depth', CAST(GREATEST(" + DEPTH + " - 1, 0) AS TEXT), true)";

    /** PostgreSQL: {@link #PUT_BACK} as a query of its own. */
    private static final String PUT_BACK_LOCK_TIMEOUT = "SELECT " + PUT_BACK;

    /**
     * The place in the batch and max_seen of the check that {@code message} (a database error's message) reports
     * rejected at commit, as {@code {place, maxSeen}}; {@code null} when the message is not such a rejection.
     */
    public static long[] rejectedAtCommit(String message) {
        if (message == null) {
            return null;
        }
        java.util.regex.Matcher m = REJECTION.matcher(message);
        return m.find() ? new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))} : null;
    }

    /**
     * PostgreSQL: one query that sets the transaction-local {@code lock_timeout} to {@code value} (for example
     * {@code 5000ms}) and returns the previous one as its first column (the select list is evaluated in order);
     * {@code null} for the other databases.
     */
    public String swapLockTimeoutSql(String value) {
        return this == POSTGRESQL ? "SELECT current_setting('lock_timeout'), set_config('lock_timeout', '"
                + value.replace("'", "''") + "', true)" : null;
    }

    /** PostgreSQL: sets the transaction-local {@code lock_timeout} to {@code value}; {@code null} elsewhere. */
    public String setLockTimeoutSql(String value) {
        return this == POSTGRESQL ? "SELECT set_config('lock_timeout', '" + value.replace("'", "''") + "', true)"
                : null;
    }

    /**
     * Compaction: the database's current time, one column; the cutoff of a compaction is computed from it, so rows
     * are judged idle by the clock that stamped them ({@code updated_at}).
     */
    public String nowSql() {
        return this == MARIADB ? "SELECT CURRENT_TIMESTAMP(6)" : "SELECT CURRENT_TIMESTAMP";
    }

    /**
     * Compaction: at most {@code limit} rows of resources with a family ({@code resource LIKE '_%:%'}, the same set
     * {@link ResourceFamily#of} gives one) last advanced before a cutoff, floor rows excluded. Parameters: cutoff,
     * {@code '%' + FLOOR_MARKER}; returns (resource, max_seen). No index on {@code updated_at} on purpose (it would
     * make every advance maintain one): the query scans until it has {@code limit} rows.
     */
    public String idleRowsSql(String table, int limit) {
        String where = "SELECT resource, max_seen FROM " + table
                + " WHERE updated_at < ? AND resource LIKE '_%:%' AND resource NOT LIKE ?";
        return this == MARIADB ? where + " LIMIT " + limit : where + " FETCH FIRST " + limit + " ROWS ONLY";
    }

    /**
     * Compaction: the rows among {@code count} resources still last advanced before the cutoff. Parameters: cutoff,
     * then the resources; returns (resource, max_seen).
     */
    public String stillIdleSql(String table, int count) {
        return "SELECT resource, max_seen FROM " + table + " WHERE updated_at < ? AND resource IN ("
                + markers(count) + ")";
    }

    /**
     * Compaction under the table lock (nothing can change the rows meanwhile): deletes the rows of {@code count}
     * resources. Parameters: the resources.
     */
    public String deleteRowsSql(String table, int count) {
        return "DELETE FROM " + table + " WHERE resource IN (" + markers(count) + ")";
    }

    /**
     * Compaction without a table lock (H2): deletes one resource's row only if it is still at most the floor its
     * family was raised to and still idle, as the row lock it waits for may be a check that advanced it and commits.
     * Parameters: the resource, that floor, the cutoff; one row deleted or none.
     */
    public String deleteRowIfStillIdleSql(String table) {
        return "DELETE FROM " + table + " WHERE resource = ? AND max_seen <= ? AND updated_at < ?";
    }

    /**
     * MariaDB: creates the floor row of a family, holding 0 (no floor), unless it exists; {@code null} elsewhere.
     * Parameter: floor key ({@link #familyFloorKey}). Run in a transaction of its own, it waits at most
     * {@code lockTimeout} for a lock (in whole seconds, rounded up), the table's metadata lock included. The check's
     * locking read of a missing floor row (REPEATABLE READ, where {@code INSERT ... SELECT} locks what it reads) takes
     * a shared lock on the gap before the family's first resource, and two first checks of resources in that gap then
     * deadlock; of an existing row, it locks that row only. {@code INSERT IGNORE} of an existing row takes a shared
     * lock, which the checks' own shared locks do not block.
     */
    public String floorRowSql(String table, Duration lockTimeout) {
        if (this != MARIADB) {
            return null;
        }
        return boundedByItself("INSERT IGNORE INTO " + table + " (resource, max_seen, holder, updated_at)"
                + " VALUES (?, 0, NULL, CURRENT_TIMESTAMP(6))", lockTimeout);
    }

    /**
     * Compaction: raises a family floor row to at least a value, creating it when missing; never lowers it.
     * Parameters: floor key ({@link #familyFloorKey}), value.
     */
    public String raiseFloorRowSql(String table) {
        return switch (this) {
            case POSTGRESQL -> "INSERT INTO " + table + " AS f (resource, max_seen, holder, updated_at)"
                    + " VALUES (?, ?, NULL, CURRENT_TIMESTAMP) ON CONFLICT (resource) DO UPDATE SET"
                    + " max_seen = GREATEST(f.max_seen, EXCLUDED.max_seen), updated_at = EXCLUDED.updated_at";
            case MARIADB -> "INSERT INTO " + table + " (resource, max_seen, holder, updated_at)"
                    + " VALUES (?, ?, NULL, CURRENT_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE"
                    + " max_seen = GREATEST(max_seen, VALUES(max_seen)), updated_at = VALUES(updated_at)";
            case H2 -> "MERGE INTO " + table + " f USING (VALUES (CAST(? AS VARCHAR(256)), CAST(? AS BIGINT)))"
                    + " s (resource, floor) ON f.resource = s.resource"
                    + " WHEN MATCHED THEN UPDATE SET max_seen = GREATEST(f.max_seen, s.floor),"
                    + " updated_at = CURRENT_TIMESTAMP"
                    + " WHEN NOT MATCHED THEN INSERT (resource, max_seen, holder, updated_at)"
                    + " VALUES (s.resource, s.floor, NULL, CURRENT_TIMESTAMP)";
        };
    }

    /**
     * Compaction: the statements, run first in a batch's transaction, that keep every check off the table until the
     * batch commits, waiting at most {@code lockTimeout} for the fenced transactions already in it. PostgreSQL:
     * {@code LOCK TABLE ... IN SHARE ROW EXCLUSIVE MODE} (conflicts with the {@code ROW EXCLUSIVE} lock every check
     * takes and holds to its commit; a check queued behind it takes its snapshot after the batch committed) under a
     * transaction-local {@code lock_timeout}. MariaDB: {@code LOCK TABLES ... WRITE WAIT n} (the metadata lock every
     * transaction that used the table holds to its end; whole seconds, rounded up), with autocommit off, released by
     * {@link #unlockSql()} after the commit. H2 has no table lock statement: none (see the compaction's Javadoc).
     */
    public java.util.List<String> lockForCompactionSql(String table, Duration lockTimeout) {
        return switch (this) {
            case POSTGRESQL -> java.util.List.of(
                    "SET LOCAL lock_timeout = '" + Math.max(1, lockTimeout.toMillis()) + "ms'",
                    "LOCK TABLE " + table + " IN SHARE ROW EXCLUSIVE MODE");
            case MARIADB -> java.util.List.of("LOCK TABLES " + table + " WRITE WAIT "
                    + Math.max(1, (lockTimeout.toMillis() + 999) / 1000));
            case H2 -> java.util.List.of();
        };
    }

    /** Compaction, MariaDB: releases {@link #lockForCompactionSql}'s lock after the commit; {@code null} elsewhere. */
    public String unlockSql() {
        return this == MARIADB ? "UNLOCK TABLES" : null;
    }

    private static String markers(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be at least 1, was " + count);
        }
        return "?" + ", ?".repeat(count - 1);
    }

    /** The schema script as a class path resource: {@code dev/fencing/store/sql/schema-postgresql.sql}. */
    public String schemaResource() {
        return "dev/fencing/store/sql/schema-" + name().toLowerCase(Locale.ROOT) + ".sql";
    }

    /**
     * The schema script's one statement ({@code CREATE TABLE IF NOT EXISTS}), without its comments and closing
     * semicolon, with {@code table} in place of {@value #DEFAULT_TABLE}.
     *
     * @throws IllegalStateException when the script is missing or not one statement
     */
    public String createTableSql(String table) {
        String statement = createStatement;
        if (statement == null) {
            statement = loadCreateStatement();
            createStatement = statement;
        }
        return CREATE + table + statement.substring((CREATE + DEFAULT_TABLE).length());
    }

    private String loadCreateStatement() {
        return scriptStatement(FenceSql.class.getClassLoader(), schemaResource(), CREATE + DEFAULT_TABLE + " (");
    }

    /**
     * The one statement of the SQL script {@code resource}: its comment lines and closing semicolon removed, checked to
     * start with {@code expectedStart}. Internal: the JDBC module reads its lease scripts with it too.
     *
     * @throws IllegalStateException when the script is missing or is not one statement starting so
     */
    public static String scriptStatement(ClassLoader loader, String resource, String expectedStart) {
        String script;
        try (InputStream in = loader.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("The script " + resource + " is missing from the class path");
            }
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not read " + resource, e);
        }
        StringBuilder statement = new StringBuilder();
        script.lines().filter(line -> !line.trim().startsWith("--"))
                .forEach(line -> statement.append(line).append('\n'));
        String sql = statement.toString().trim();
        if (sql.endsWith(";")) {
            sql = sql.substring(0, sql.length() - 1).trim();
        }
        if (!sql.startsWith(expectedStart) || sql.indexOf(';') >= 0) {
            throw new IllegalStateException("The script " + resource + " must hold one statement, starting with '"
                    + expectedStart + "'");
        }
        return sql;
    }
}

package dev.fencing.store.sql;

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

    /** PostgreSQL 9.5+: {@code INSERT ... ON CONFLICT DO UPDATE ... RETURNING}. */
    POSTGRESQL("""
            INSERT INTO %1$s AS f (resource, max_seen, holder, updated_at)
            VALUES (?, ?, ?, CURRENT_TIMESTAMP)
            ON CONFLICT (resource) DO UPDATE SET
                updated_at = CASE WHEN (f.max_seen < EXCLUDED.max_seen%2$s)
                                    OR (f.max_seen = EXCLUDED.max_seen AND f.holder = EXCLUDED.holder)
                                  THEN EXCLUDED.updated_at ELSE f.updated_at END,
                holder     = CASE WHEN f.max_seen < EXCLUDED.max_seen%2$s THEN EXCLUDED.holder ELSE f.holder END,
                max_seen   = CASE WHEN f.max_seen < EXCLUDED.max_seen%2$s THEN EXCLUDED.max_seen ELSE f.max_seen END
            RETURNING max_seen, holder""",
            " AND EXCLUDED.max_seen - f.max_seen <= %d"),

    /**
     * MariaDB 10.5+: {@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING}. Assignments run left to right and
     * see the columns already assigned, so the conditions come before the columns they read are changed. The text
     * columns use {@code utf8mb4_nopad_bin}: the server default ({@code utf8mb4_general_ci}) would make
     * {@code a}/{@code A}, {@code u}/{@code ü} and {@code x}/{@code "x "} one row.
     */
    MARIADB("""
            INSERT INTO %1$s (resource, max_seen, holder, updated_at)
            VALUES (?, ?, ?, CURRENT_TIMESTAMP(6))
            ON DUPLICATE KEY UPDATE
                updated_at = IF((max_seen < VALUES(max_seen)%2$s)
                                OR (max_seen = VALUES(max_seen) AND holder = VALUES(holder)),
                                VALUES(updated_at), updated_at),
                holder     = IF(max_seen < VALUES(max_seen)%2$s, VALUES(holder), holder),
                max_seen   = IF(max_seen < VALUES(max_seen)%2$s, VALUES(max_seen), max_seen)
            RETURNING max_seen, holder""",
            " AND VALUES(max_seen) - max_seen <= %d"),

    /** H2 2.x: {@code MERGE ... USING} read back through {@code FINAL TABLE}. */
    H2("""
            SELECT max_seen, holder FROM FINAL TABLE (
                MERGE INTO %1$s f
                USING (VALUES (CAST(? AS VARCHAR(256)), CAST(? AS BIGINT), CAST(? AS VARCHAR(256))))
                      s (resource, max_seen, holder)
                ON f.resource = s.resource
                WHEN MATCHED THEN UPDATE SET
                    updated_at = CASE WHEN (f.max_seen < s.max_seen%2$s)
                                        OR (f.max_seen = s.max_seen AND f.holder = s.holder)
                                      THEN CURRENT_TIMESTAMP ELSE f.updated_at END,
                    holder     = CASE WHEN f.max_seen < s.max_seen%2$s THEN s.holder ELSE f.holder END,
                    max_seen   = CASE WHEN f.max_seen < s.max_seen%2$s THEN s.max_seen ELSE f.max_seen END
                WHEN NOT MATCHED THEN INSERT (resource, max_seen, holder, updated_at)
                    VALUES (s.resource, s.max_seen, s.holder, CURRENT_TIMESTAMP)
            )""",
            " AND s.max_seen - f.max_seen <= %d");

    /**
     * PostgreSQL: the check-and-advance statement for a check sent with {@code COMMIT}
     * ({@link #checksAtCommitSql}); as {@link #POSTGRESQL}'s, but a rejection raises an error instead of returning
     * the row, so that the transaction aborts inside the server before the {@code COMMIT} after it runs. The error is
     * a failed cast (SQLSTATE 22P02) of a text carrying {@value #REJECTED_AT_COMMIT}, the statement's place in the
     * batch and max_seen: it reads the row, so it is never folded at plan time. %3$d is the place.
     */
    private static final String POSTGRESQL_AT_COMMIT = """
            INSERT INTO %1$s AS f (resource, max_seen, holder, updated_at)
            VALUES (?, ?, ?, CURRENT_TIMESTAMP)
            ON CONFLICT (resource) DO UPDATE SET
                updated_at = CASE WHEN (f.max_seen < EXCLUDED.max_seen%2$s)
                                    OR (f.max_seen = EXCLUDED.max_seen AND f.holder = EXCLUDED.holder)
                                  THEN EXCLUDED.updated_at ELSE f.updated_at END,
                holder     = CASE WHEN f.max_seen < EXCLUDED.max_seen%2$s THEN EXCLUDED.holder ELSE f.holder END,
                max_seen   = CASE WHEN f.max_seen < EXCLUDED.max_seen%2$s THEN EXCLUDED.max_seen
                                  WHEN f.max_seen = EXCLUDED.max_seen AND f.holder = EXCLUDED.holder THEN f.max_seen
                                  ELSE CAST('fencing-rejected check=%3$d max_seen=' || f.max_seen AS BIGINT) END""";

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
    private volatile String createStatement;

    FenceSql(String check, String advanceBound) {
        this.check = check;
        this.advanceBound = advanceBound;
    }

    /**
     * The check-and-advance statement on {@code table}; parameters: resource, token value, holder; returns one row
     * (max_seen, holder). With a bound on one advance (not {@link FenceRule#UNBOUNDED}), evaluated by the same
     * statement: on an existing row, a token more than {@code maxAdvance} above max_seen leaves the row as it is
     * (still locked), so the row returned has a max_seen below the token; a first token inserts its row whatever
     * its value.
     */
    public String checkSql(String table, long maxAdvance) {
        String bound = maxAdvance == FenceRule.UNBOUNDED ? "" : advanceBound.formatted(maxAdvance);
        return check.formatted(table, bound);
    }

    /**
     * {@link #checkSql(String, long)} bounded to wait at most {@code lockTimeout} for the resource's row lock when
     * the database can bound one statement by itself (MariaDB's {@code SET STATEMENT innodb_lock_wait_timeout=n
     * FOR}, in whole seconds rounded up); otherwise the plain statement, bounded by
     * {@link #swapLockTimeoutSql(String)} around it.
     */
    public String checkSql(String table, Duration lockTimeout, long maxAdvance) {
        if (this == MARIADB) {
            long seconds = Math.max(1, (lockTimeout.toMillis() + 999) / 1000);
            return "SET STATEMENT innodb_lock_wait_timeout=" + seconds + " FOR " + checkSql(table, maxAdvance);
        }
        return checkSql(table, maxAdvance);
    }

    /**
     * Whether this database can send its checks in the round trip of {@code COMMIT} ({@link #checksAtCommitSql}):
     * PostgreSQL only.
     */
    public boolean checksAtCommit() {
        return this == POSTGRESQL;
    }

    /**
     * PostgreSQL: one text of {@code checks} check-and-advance statements followed by {@code COMMIT}, preceded by
     * {@code SET LOCAL lock_timeout} to {@code lockTimeout} (for example {@code 5000ms}) so that each check waits at
     * most that long for its row. Parameters: resource, token value, holder, for each check in turn. A rejected check
     * raises an error ({@link #rejectedAtCommit(String)} reads which check and max_seen from its message): the
     * statements after it, {@code COMMIT} included, do not run, and the transaction is left aborted.
     *
     * @throws UnsupportedOperationException for another database
     */
    public String checksAtCommitSql(String table, String lockTimeout, long maxAdvance, int checks) {
        return checksAtCommitSql(table, lockTimeout, maxAdvance, checks, true);
    }

    /**
     * {@link #checksAtCommitSql(String, String, long, int)}, or with {@code commit} false the same checks without
     * {@code COMMIT}, the connection's lock wait bound put back after them (for a transaction that commits later).
     */
    public String checksAtCommitSql(String table, String lockTimeout, long maxAdvance, int checks, boolean commit) {
        if (this != POSTGRESQL) {
            throw new UnsupportedOperationException(this + " cannot check at commit");
        }
        if (checks < 1) {
            throw new IllegalArgumentException("checks must be at least 1, was " + checks);
        }
        String bound = maxAdvance == FenceRule.UNBOUNDED ? "" : advanceBound.formatted(maxAdvance);
        String value = lockTimeout.replace("'", "''");
        StringBuilder sql = new StringBuilder(commit ? "SET LOCAL lock_timeout = '" + value + "';\n"
                : swapInLockTimeout(lockTimeout));
        for (int i = 0; i < checks; i++) {
            sql.append(POSTGRESQL_AT_COMMIT.formatted(table, bound, i)).append(";\n");
        }
        return sql.append(commit ? "COMMIT" : PUT_BACK_LOCK_TIMEOUT).toString();
    }

    /**
     * PostgreSQL: {@link #checkSql(String, long)} bounded to wait at most {@code lockTimeout} (for example
     * {@code 5000ms}) for the resource's row lock, in one text sent in one round trip: a query that sets the
     * transaction-local {@code lock_timeout} (keeping the caller's in {@code fencing.lock_timeout}), the check, and a
     * query that puts the caller's back. Parameters as the check's; its row is the <em>second</em> result. When the
     * check fails the rest does not run and the transaction is aborted (its settings with it).
     *
     * @throws UnsupportedOperationException for another database (they bound the statement by themselves, or
     *                                       around it)
     */
    public String boundedCheckSql(String table, String lockTimeout, long maxAdvance) {
        if (this != POSTGRESQL) {
            throw new UnsupportedOperationException(this + " bounds its check's lock wait otherwise");
        }
        return swapInLockTimeout(lockTimeout) + checkSql(table, maxAdvance) + ";\n" + PUT_BACK_LOCK_TIMEOUT;
    }

    /** PostgreSQL: keeps the caller's lock_timeout in a custom setting and sets {@code lockTimeout}; one query. */
    private static String swapInLockTimeout(String lockTimeout) {
        return "SELECT set_config('fencing.lock_timeout', current_setting('lock_timeout'), true), "
                + "set_config('lock_timeout', '" + lockTimeout.replace("'", "''") + "', true);\n";
    }

    /** PostgreSQL: puts back the lock_timeout {@link #swapInLockTimeout} kept. */
    private static final String PUT_BACK_LOCK_TIMEOUT =
            "SELECT set_config('lock_timeout', current_setting('fencing.lock_timeout'), true)";

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

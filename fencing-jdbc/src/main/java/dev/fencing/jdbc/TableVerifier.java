package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.token.FencingToken;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The startup check of a fence or lease table, the same for both: create it first when configured to, check the
 * column types and widths, write probe rows inside a transaction it rolls back (the table exists and works, and
 * resources differing only in case, accents or trailing spaces get rows of their own), and read the unique key on
 * {@code resource}. Once passed, it is not repeated; a failed check is repeated on the next call. Every probe runs in
 * a transaction of its own, so a lazy first check never joins (or marks rollback-only) a caller's transaction.
 *
 * <p>Several instances starting at once on one table must all pass: each verifier probes resources of its own (a
 * random number in {@link #probeResource(long)}), so no two instances write the same row, and a step the database
 * aborts as a lock conflict (deadlock, lock wait timeout, serialization failure: under REPEATABLE READ, InnoDB's gap
 * and next-key locks can make transactions on distinct rows of one table collide) is run again, at most
 * {@value #LOCK_ATTEMPTS} times, after a short random pause; so is the creation of the table when another instance
 * created it at the same moment ({@link #isCreateConflict(Throwable)}). Any other failure fails at once.
 */
final class TableVerifier {

    private static final Log log = LogFactory.getLog(TableVerifier.class);

    /**
     * The start of every probe resource: {@link #probeResource(long)} adds a number of the verifier's own and
     * {@code ":Ab"}, whose variants differ only in case ({@code aB}), accents ({@code \u00c4b}) or a trailing space.
     */
    static final String PROBE = "fencing-startup-probe-";

    /** How many times a step the database aborts as a lock conflict is run, in all. */
    static final int LOCK_ATTEMPTS = 5;

    /** The probe resource of a verifier numbered {@code unique}: {@code "Ab"} occurs once in it, at the end. */
    static String probeResource(long unique) {
        return PROBE + unique + ":Ab";
    }

    /** How the owner of the table writes and reads probe rows, with its own statements. */
    interface Probe {
        /**
         * Writes the row of {@code resource}, which has none yet.
         *
         * @throws FencingConfigurationException when the table accepts the row but does not behave as it must
         */
        void write(String resource);

        /** Whether {@code resource} found the row written for another resource instead of one of its own. */
        boolean sharesRow(String resource);
    }

    private final JdbcTable kind;
    private final JdbcDialect dialect;
    private final String table;
    private final boolean createTable;
    private final JdbcTemplate jdbc;
    private final TransactionTemplate probeTransactions;
    private final Probe probe;
    private final Supplier<String> verifiedDetail;
    /** This verifier's probe resource: no other instance writes it, so concurrent probes share no row. */
    private final String probeResource = probeResource(ThreadLocalRandom.current().nextLong(Long.MAX_VALUE));
    private volatile boolean verified;
    /** Whether the check created the table: it was missing before the create, and there after it. */
    private volatile boolean created;
    private final ReentrantLock verifying = new ReentrantLock();

    /** Waits between attempts, the milliseconds given; a test seam, package-private. */
    volatile LongConsumer pause = TableVerifier::sleep;

    TableVerifier(JdbcTable kind, JdbcDialect dialect, String table, boolean createTable, JdbcTemplate jdbc,
                  PlatformTransactionManager transactionManager, Probe probe, Supplier<String> verifiedDetail) {
        this.kind = kind;
        this.dialect = dialect;
        this.table = table;
        this.createTable = createTable;
        this.jdbc = jdbc;
        this.probeTransactions = new TransactionTemplate(transactionManager);
        this.probeTransactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.probe = probe;
        this.verifiedDetail = verifiedDetail;
    }

    /**
     * The probe of a fence table, through the owner's check-and-advance statement: a smaller token after a larger
     * one must be refused (the rows are keyed by resource), and a resource shares a row when its first token is
     * refused.
     *
     * @param check runs the check of a token, throwing {@link TokenRejectedException} on a refusal
     */
    static Probe fenceProbe(String table, JdbcDialect dialect, Consumer<FencingToken> check) {
        return new Probe() {
            @Override
            public void write(String resource) {
                check.accept(new FencingToken(resource, 2, "probe-a"));
                if (!refused(new FencingToken(resource, 1, "probe-b"))) {
                    throw new FencingConfigurationException("Fence table '" + table + "' accepted a smaller token "
                            + "after a larger one: its 'resource' column must be the primary key; recreate it with "
                            + JdbcTable.FENCE.script(dialect));
                }
            }

            @Override
            public boolean sharesRow(String resource) {
                return refused(new FencingToken(resource, 1, "probe-c"));
            }

            private boolean refused(FencingToken token) {
                try {
                    check.accept(token);
                    return false;
                } catch (TokenRejectedException refused) {
                    return true;
                }
            }
        };
    }

    /** Whether the table passed; it is then not checked again. */
    boolean isVerified() {
        return verified;
    }

    /**
     * Checks the table unless it passed before. Thread-safe.
     *
     * @throws FencingConfigurationException naming the table, the column and the fix
     */
    void verify() {
        if (verified) {
            return;
        }
        verifying.lock(); // a lock, not a monitor: a virtual thread checking the table does not pin its carrier
        try {
            if (verified) {
                return;
            }
            boolean[] missingBefore = new boolean[1];
            if (createTable) {
                inspect(() -> {
                    Map<String, Column> before = columns();
                    missingBefore[0] = before == null || before.isEmpty();
                });
                try {
                    withRetries("creating it", TableVerifier::isCreateConflict, () ->
                            probeTransactions.executeWithoutResult(status ->
                                    jdbc.execute(kind.createTableSql(dialect, table))));
                } catch (DataAccessException | TransactionException e) {
                    String pooler = poolerHint(e); // then the statement failed, not the table
                    throw new FencingConfigurationException(kind.what() + " '" + table + "' could not be "
                            + (pooler.isEmpty() ? "created" : "checked") + " on " + dialect.productName() + ": "
                            + rootMessage(e) + pooler, e);
                }
            }
            inspect(this::requireTransactionalEngine);
            boolean[] found = new boolean[1];
            inspect(() -> found[0] = requireColumns());
            // missing before the create and there after it: this start created it (a table it cannot see in the
            // metadata either way is not said to be created)
            created = missingBefore[0] && found[0];
            if (found[0]) { // before the probe, whose statement a table without the key fails in the database's words
                inspect(this::requireUniqueResourceKey);
            }
            probe();
            if (!found[0]) { // the metadata showed no columns (the table missing, or not visible there)
                inspect(this::requireUniqueResourceKey);
            }
            verified = true;
                } finally {
            verifying.unlock();
        }
        if (created) {
            log.info(kind.owner() + ": table '" + table + "' on " + dialect.productName() + " created now (it did "
                    + "not exist) and verified" + verifiedDetail.get() + ". It starts empty: if other instances use "
                    + "a table of another name, one of the two names is a typo");
        } else {
            log.info(kind.owner() + ": table '" + table + "' on " + dialect.productName() + " verified"
                    + (createTable ? " (it existed)" : "") + verifiedDetail.get());
        }
    }

    /** Whether this verifier created its table (it was missing before the create, and there after it). */
    boolean createdTable() {
        return created;
    }

    /** Reads the table's metadata in a transaction of its own. */
    private void inspect(Runnable check) {
        try {
            probeTransactions.executeWithoutResult(status -> check.run());
        } catch (DataAccessException | TransactionException e) {
            throw new FencingConfigurationException(kind.what() + " '" + table + "' could not be inspected on "
                    + dialect.productName() + ": " + rootMessage(e) + poolerHint(e), e);
        }
    }

    /**
     * Writes probe rows inside a transaction that is rolled back: the table exists, has the columns and works, and
     * resources that differ only in case, accents, trailing spaces, a zero-width space or the composition of a
     * character ({@code \u00c5} or {@code A} and a combining ring) get rows of their own (the resource column compares
     * exactly). The resources are this verifier's own ({@link #probeResource(long)}), so instances
     * starting at once do not write one row.
     */
    private void probe() {
        String resource = probeResource;
        try {
            withRetries("its probe", TableVerifier::isLockConflict, () ->
                    probeTransactions.executeWithoutResult(status -> {
                        status.setRollbackOnly();
                        probe.write(resource);
                        String otherCase = resource.replace("Ab", "aB");
                        requireDistinct(otherCase, "compares case-insensitively ('" + resource + "' and '" + otherCase
                                + "' are one row)");
                        requireDistinct(resource + " ", "ignores trailing spaces (PAD SPACE: '" + resource + "' and '"
                                + resource + " ' are one row)");
                        String accented = resource.replace("Ab", "\u00c4b");
                        requireDistinct(accented, "compares accent-insensitively ('" + resource + "' and '" + accented
                                + "' are one row)");
                        // UCA and ICU collations that are case- and accent-sensitive and no-pad pass the three checks
                        // above, yet ignore zero-width characters and compare canonically equivalent spellings equal
                        String composed = resource.replace("Ab", "\u00c5b");
                        probe.write(composed);
                        requireDistinct(resource.replace("Ab", "A\u030ab"), "compares canonically equivalent "
                                + "spellings as one ('" + composed + "' with a composed \\u00c5 and the same name "
                                + "typed as A and a combining ring above \\u030a are one row)");
                        String invisible = resource.replace("Ab", "A\u200bb");
                        requireDistinct(invisible, "ignores invisible characters ('" + resource + "' and '"
                                + FencingToken.printable(invisible) + "' are one row)");
                    }));
        } catch (FenceStoreException | DataAccessException | TransactionException e) {
            String pooler = poolerHint(e);
            if (!pooler.isEmpty()) {
                throw new FencingConfigurationException(kind.what() + " '" + table + "' could not be checked on "
                        + dialect.productName() + " (" + rootMessage(e) + ")" + pooler, e);
            }
            String denied = denied(e);
            if (denied != null) {
                throw new FencingConfigurationException(kind.what() + " '" + table + "' exists but cannot be "
                        + "written on " + dialect.productName() + " by the application's connections (" + rootMessage(e)
                        + "): " + denied, e);
            }
            throw new FencingConfigurationException(kind.what() + " '" + table + "' is missing or unusable on "
                    + dialect.productName() + " (" + rootMessage(e) + "). Create it with the script "
                    + kind.script(dialect) + (table.equals(kind.defaultName()) ? "" : ", with '" + table
                    + "' in place of its default name '" + kind.defaultName() + "'") + " (see the README), or build "
                    + "the " + kind.ownerNoun() + " with createTableIfMissing(true)", e);
        }
    }

    /**
     * Runs {@code step} (a transaction of its own), again after a lock conflict ({@code conflict}), at most
     * {@value #LOCK_ATTEMPTS} times in all with a random pause of tens of milliseconds, growing, in between. Any
     * other failure is thrown at once, as it is.
     *
     * @throws FencingConfigurationException naming the table, the database and the attempts, when every attempt was
     *                                       a lock conflict
     */
    private void withRetries(String what, Predicate<Throwable> conflict, Runnable step) {
        for (int attempt = 1; ; attempt++) {
            try {
                step.run();
                return;
            } catch (RuntimeException e) {
                if (!conflict.test(e)) {
                    throw e;
                }
                if (attempt >= LOCK_ATTEMPTS) {
                    throw new FencingConfigurationException(kind.what() + " '" + table + "' on "
                            + dialect.productName() + " could not be checked at startup: " + what + " failed on a "
                            + "lock conflict with concurrent transactions after " + LOCK_ATTEMPTS + " attempts ("
                            + rootMessage(e) + "); a long transaction may hold locks on the table, or many "
                            + "instances are starting at once: start this one again", e);
                }
                long base = 20L << (attempt - 1);
                long millis = ThreadLocalRandom.current().nextLong(base, 2 * base);
                log.info(kind.owner() + ": the startup check of table '" + table + "' on " + dialect.productName()
                        + " met a conflict with a concurrent transaction (attempt " + attempt + " of "
                        + LOCK_ATTEMPTS + ", " + what + ": " + rootMessage(e) + "); running it again in " + millis
                        + " ms");
                pause.accept(millis);
                if (Thread.currentThread().isInterrupted()) {
                    throw e;
                }
            }
        }
    }

    /**
     * Whether the database aborted a statement or transaction as a lock conflict that running it again may not
     * meet: a deadlock or serialization failure (SQLSTATE 40001, PostgreSQL 40P01, MariaDB/MySQL 1213) or a lock
     * wait timeout (MariaDB/MySQL 1205, PostgreSQL 55P03), found anywhere in the cause chain, or as Spring
     * translated it ({@link ConcurrencyFailureException}: {@code PessimisticLockingFailureException},
     * {@code CannotAcquireLockException}, the store's {@link FenceConflictException} and {@link FenceBusyException}).
     * Other transient failures (a lost connection, a query timeout) are not lock conflicts and fail at once.
     */
    static boolean isLockConflict(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ConcurrencyFailureException) {
                return true;
            }
            if (t instanceof SQLException sql) {
                String state = sql.getSQLState();
                int code = sql.getErrorCode();
                if ("40001".equals(state) || "40P01".equals(state) || "55P03".equals(state)
                        || code == 1213 || code == 1205) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * {@link #isLockConflict(Throwable)}, or another instance creating the table at the same moment: PostgreSQL's
     * {@code CREATE TABLE IF NOT EXISTS} checks for the table before it inserts the catalog rows, so of several
     * instances creating one table at once all but one fail on the catalog's unique key (SQLSTATE 23505 on
     * {@code pg_type_typname_nsp_index}), with 42P07 (the relation exists) or 42710 (its row type exists). Run again,
     * the statement finds the table and does nothing.
     */
    static boolean isCreateConflict(Throwable failure) {
        if (isLockConflict(failure)) {
            return true;
        }
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql && ("23505".equals(sql.getSQLState())
                    || "42P07".equals(sql.getSQLState()) || "42710".equals(sql.getSQLState()))) {
                return true;
            }
        }
        return false;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void requireDistinct(String resource, String problem) {
        if (probe.sharesRow(resource)) {
            throw new FencingConfigurationException(kind.what() + " '" + table + "' column 'resource' " + problem
                    + ", so distinct resources would share one " + kind.sharedState() + "; give it an exact "
                    + "(binary, no-pad) comparison: " + dialect.alterColumnSql(table, "resource") + " (and the same "
                    + "for 'holder'), or recreate the table with " + kind.script(dialect));
        }
    }

    /**
     * Reads the table's columns from the connection's metadata and checks each needed one's type and width, so a
     * table that would fail at run time (a 49-character resource in {@code VARCHAR(32)}, a 64-bit token in an
     * {@code INTEGER}) fails at startup instead. Finds nothing to check when the table does not exist (the probe
     * reports that).
     */
    private boolean requireColumns() {
        Map<String, Column> columns = columns();
        if (columns == null || columns.isEmpty()) {
            return false;
        }
        return requireColumns(columns);
    }

    /** The table's columns as the metadata shows them, lower-case by name; empty when it shows none. */
    private Map<String, Column> columns() {
        return jdbc.execute((Connection c) -> {
            DatabaseMetaData meta = c.getMetaData();
            String catalog = c.getCatalog();
            String schema = dialect == JdbcDialect.MARIADB ? null : c.getSchema();
            String name = table;
            int dot = table.indexOf('.');
            if (dot > 0) {
                name = table.substring(dot + 1);
                if (dialect == JdbcDialect.MARIADB) {
                    catalog = table.substring(0, dot);
                } else {
                    schema = table.substring(0, dot);
                }
            }
            for (String[] candidate : new String[][] {{schema, name},
                    {lower(schema), name.toLowerCase(Locale.ROOT)}, {upper(schema), name.toUpperCase(Locale.ROOT)}}) {
                Map<String, Column> found = new LinkedHashMap<>();
                try (ResultSet rs = meta.getColumns(catalog, candidate[0], candidate[1], null)) {
                    while (rs.next()) {
                        String column = rs.getString("COLUMN_NAME").toLowerCase(Locale.ROOT);
                        found.putIfAbsent(column, new Column(rs.getInt("DATA_TYPE"), rs.getString("TYPE_NAME"),
                                rs.getLong("COLUMN_SIZE")));
                    }
                }
                if (!found.isEmpty()) {
                    return found;
                }
            }
            return Map.<String, Column>of();
        });
    }

    private boolean requireColumns(Map<String, Column> columns) {
        String script = kind.script(dialect);
        java.util.List<String> missing = kind.columns().keySet().stream().filter(name -> !columns.containsKey(name))
                .toList();
        if (missing.size() > 1) {
            // not a table of this kind with a column short: another table, named by mistake
            throw new FencingConfigurationException(kind.what() + " '" + table + "' has none of the columns "
                    + String.join(", ", missing) + " (it has " + String.join(", ", columns.keySet()) + "): it is not "
                    + "a " + kind.what().toLowerCase(Locale.ROOT) + "; check the table name, or create the table "
                    + "with " + script + (table.equals(kind.defaultName()) ? "" : ", with '" + table + "' in place "
                    + "of its default name '" + kind.defaultName() + "'"));
        }
        for (Map.Entry<String, JdbcTable.ColumnNeed> need : kind.columns().entrySet()) {
            String name = need.getKey();
            Column column = columns.get(name);
            if (column == null) {
                String add = dialect.addColumnSql(table, name);
                throw new FencingConfigurationException(kind.what() + " '" + table + "' has no column '" + name
                        + "'; " + (add != null ? "add it with: " + add + " (or recreate the table with " + script
                        + ")" : "recreate it with " + script));
            }
            String problem = switch (need.getValue()) {
                case BIGINT -> column.type == Types.BIGINT ? null
                        : "is " + column.describe() + ", but tokens are 64-bit values and need BIGINT";
                case TEXT -> switch (column.type) {
                    case Types.VARCHAR, Types.NVARCHAR, Types.LONGVARCHAR, Types.LONGNVARCHAR ->
                            column.size >= FencingToken.MAX_PART_LENGTH ? null : "is " + column.describe()
                                    + ", narrower than the " + FencingToken.MAX_PART_LENGTH
                                    + " characters a resource or holder may have (FencingToken.MAX_PART_LENGTH)";
                    case Types.CHAR, Types.NCHAR -> "is " + column.describe() + ": fixed-length text is padded "
                            + "with spaces, so 'x' and 'x ' would be one value; it must be VARCHAR("
                            + FencingToken.MAX_PART_LENGTH + ")";
                    default -> "is " + column.describe() + ", not variable-length text of at least "
                            + FencingToken.MAX_PART_LENGTH + " characters";
                };
                case TIMESTAMP -> column.type == Types.TIMESTAMP || column.type == Types.TIMESTAMP_WITH_TIMEZONE
                        ? null : "is " + column.describe() + ", but it holds when the row last advanced (compaction "
                        + "reads it) and needs a timestamp";
                case INSTANT -> instant(column) ? null : "is " + column.typeName() + ", but it holds when a lease "
                        + "expires, which every instance's session compares with the database's clock: a timestamp "
                        + "without a time zone is read in each session's zone, so instances in two zones would both "
                        + "hold one lock; it needs " + (dialect == JdbcDialect.MARIADB ? "TIMESTAMP"
                        : "TIMESTAMP WITH TIME ZONE");
            };
            if (problem != null) {
                throw new FencingConfigurationException(kind.what() + " '" + table + "' column '" + name + "' "
                        + problem + "; fix it with: " + dialect.alterColumnSql(table, name) + " (or recreate the "
                        + "table with " + script + ")");
            }
        }
        return true;
    }

    /**
     * MariaDB only: the table's storage engine must be InnoDB. A non-transactional one (Aria, MyISAM, MEMORY) ignores
     * the transaction and its row locks: a check commits at once whatever the write's transaction does, so a stale
     * write can commit after a newer one and a rolled-back write keeps its max_seen (a new user's trial put the table
     * on Aria and saw both). Another transactional engine is refused too, as untested.
     */
    private void requireTransactionalEngine() {
        if (dialect == JdbcDialect.POSTGRESQL) {
            requireDurable();
            return;
        }
        if (dialect != JdbcDialect.MARIADB) {
            return;
        }
        int dot = table.indexOf('.');
        String schema = dot > 0 ? "?" : "DATABASE()";
        String name = dot > 0 ? table.substring(dot + 1) : table;
        Object[] args = dot > 0 ? new Object[] {table.substring(0, dot), name} : new Object[] {name};
        List<Map<String, Object>> rows = jdbc.queryForList("SELECT TABLE_NAME, ENGINE FROM information_schema.TABLES "
                + "WHERE TABLE_SCHEMA = " + schema + " AND LOWER(TABLE_NAME) = LOWER(?)", args);
        Map<String, Object> row = rows.stream().filter(r -> name.equals(r.get("TABLE_NAME"))).findFirst()
                .orElse(rows.isEmpty() ? null : rows.get(0));
        if (row == null) {
            return;                                        // no such table: the probe says so, with the script
        }
        Object engine = row.get("ENGINE");
        if (!"InnoDB".equalsIgnoreCase(String.valueOf(engine))) {
            throw new FencingConfigurationException(kind.what() + " '" + table + "' uses the " + engine + " storage "
                    + "engine on " + dialect.productName() + ", which does not hold its rows in the transaction of "
                    + "the write: a check would commit at once, so a stale write could commit after a newer one and "
                    + "a rolled-back write would keep its token. Convert it with: ALTER TABLE " + table
                    + " ENGINE=InnoDB (or recreate it with " + kind.script(dialect) + "); the tables your fenced "
                    + "methods write must be InnoDB too");
        }
    }

    /**
     * A PostgreSQL table that is {@code UNLOGGED} is emptied by crash recovery and never reaches a replica, and a
     * {@code TEMPORARY} one lives in one session: either way max_seen (or a lease counter) would be gone after a crash,
     * a failover or a reconnect, and a resource's first token is accepted whatever its value, so a zombie's old one
     * would land again (and a lease counter would issue tokens again from 1).
     */
    private void requireDurable() {
        List<String> persistence = jdbc.queryForList(FenceSql.PERSISTENCE_SQL, String.class, table);
        String notDurable = persistence.isEmpty() ? null : FenceSql.notDurable(persistence.get(0));
        if (notDurable == null) {
            return;                                        // no such table (the probe says so), or a durable one
        }
        throw new FencingConfigurationException(kind.what() + " '" + table + "' " + notDurable + ", and with it "
                + "every max_seen and lease counter it holds; a resource's first token is then accepted whatever "
                + "its value, so a zombie's old token would write again. " + ("u".equals(persistence.get(0))
                ? "Make it durable with: ALTER TABLE " + table + " SET LOGGED (for a partitioned table, on each "
                + "UNLOGGED partition)"
                : "Create it as a regular table with " + kind.script(dialect)));
    }

    /**
     * The connection's current schema when a table {@code name} is there (an unqualified name resolves to it first),
     * so that a same-named table of another schema, with a key of its own, is not taken for it; {@code null} (any
     * schema) otherwise, for a table found further along PostgreSQL's search path.
     */
    private static String currentSchemaHolding(DatabaseMetaData meta, Connection c, String name) throws SQLException {
        String current = c.getSchema();
        if (current == null) {
            return null;
        }
        for (String[] candidate : new String[][] {{current, name}, {current.toLowerCase(Locale.ROOT),
                name.toLowerCase(Locale.ROOT)}, {current.toUpperCase(Locale.ROOT), name.toUpperCase(Locale.ROOT)}}) {
            try (ResultSet rs = meta.getTables(c.getCatalog(), candidate[0], candidate[1], null)) {
                if (rs.next()) {
                    return current;
                }
            }
        }
        return null;
    }

    /**
     * Without a unique key on {@code resource}, two first uses of one resource could both insert, and later
     * statements would read the wrong row. The probe cannot see that on every database (H2's MERGE matches by its
     * ON clause), so the key is read from the metadata.
     */
    private void requireUniqueResourceKey() {
        Boolean found = jdbc.execute((Connection c) -> {
            DatabaseMetaData meta = c.getMetaData();
            String name = table.contains(".") ? table.substring(table.indexOf('.') + 1) : table;
            String schema = table.contains(".") ? table.substring(0, table.indexOf('.'))
                    : dialect == JdbcDialect.MARIADB ? null : currentSchemaHolding(meta, c, name);
            for (String candidate : new String[] {name, name.toLowerCase(Locale.ROOT),
                    name.toUpperCase(Locale.ROOT)}) {
                // a set per index: the schema spelled as given and in lower case may be one schema, read twice
                Map<String, Set<String>> columnsByIndex = new HashMap<>();
                for (String s : schema == null ? new String[] {null}
                        : new LinkedHashSet<>(List.of(schema, schema.toLowerCase(Locale.ROOT),
                                schema.toUpperCase(Locale.ROOT))).toArray(String[]::new)) {
                    try (ResultSet rs = meta.getIndexInfo(c.getCatalog(), s, candidate, true, false)) {
                        while (rs.next()) {
                            String index = rs.getString("INDEX_NAME");
                            String column = rs.getString("COLUMN_NAME");
                            if (index != null && column != null) {
                                columnsByIndex.computeIfAbsent(index, k -> new LinkedHashSet<>()).add(column);
                            }
                        }
                    }
                }
                for (Set<String> columns : columnsByIndex.values()) {
                    if (columns.size() == 1 && columns.iterator().next().equalsIgnoreCase("resource")) {
                        return true;
                    }
                }
            }
            return false;
        });
        if (!Boolean.TRUE.equals(found)) {
            throw new FencingConfigurationException(kind.what() + " '" + table + "' has no primary key or unique "
                    + "index on 'resource' alone, so two first uses of a resource could both insert a row; recreate "
                    + "it with " + kind.script(dialect));
        }
        if (dialect != JdbcDialect.MARIADB) {
            return;
        }
        List<String> keys = mariaDbUniqueKeys();
        if (!keys.contains("resource")) {
            throw new FencingConfigurationException(kind.what() + " '" + table + "' has its unique key on a prefix "
                    + "of 'resource' only (PRIMARY KEY (resource(n)), say): resources that share the prefix share one "
                    + "row, and one's max_seen refuses the other's tokens; recreate it with " + kind.script(dialect));
        }
        String other = keys.stream().filter(columns -> !columns.equals("resource")).findFirst().orElse(null);
        if (other != null) {
            throw new FencingConfigurationException(kind.what() + " '" + table + "' has a unique key on (" + other
                    + ") besides the one on 'resource': MariaDB's INSERT ... ON DUPLICATE KEY UPDATE updates the row "
                    + "that conflicts on any unique key, so one resource's check would advance another resource's "
                    + "row and accept a stale token; drop that key, or recreate the table with "
                    + kind.script(dialect));
        }
    }

    /**
     * MariaDB: the columns of each unique key but an auto-increment primary key (which never conflicts on insert), in
     * lower case, a column keyed on a prefix only followed by its length ({@code resource(64)}), which JDBC's index
     * metadata does not show.
     */
    private List<String> mariaDbUniqueKeys() {
        int dot = table.indexOf('.');
        return jdbc.queryForList("SELECT GROUP_CONCAT(LOWER(s.COLUMN_NAME), IF(s.SUB_PART IS NULL, '',"
                + " CONCAT('(', s.SUB_PART, ')')) ORDER BY s.SEQ_IN_INDEX)"
                + " FROM information_schema.STATISTICS s WHERE s.TABLE_SCHEMA = COALESCE(?, DATABASE())"
                + " AND LOWER(s.TABLE_NAME) = LOWER(?) AND s.NON_UNIQUE = 0"
                + " AND NOT EXISTS (SELECT 1 FROM information_schema.COLUMNS c WHERE c.TABLE_SCHEMA = s.TABLE_SCHEMA"
                + " AND c.TABLE_NAME = s.TABLE_NAME AND c.COLUMN_NAME = s.COLUMN_NAME"
                + " AND c.EXTRA LIKE '%auto_increment%')"
                + " GROUP BY s.INDEX_NAME", String.class,
                dot > 0 ? table.substring(0, dot) : null, dot > 0 ? table.substring(dot + 1) : table);
    }


    /**
     * The fix when the probe failed for lack of a privilege or on a read-only connection (not a missing table, whose
     * fix is the script), by SQL state and MariaDB's error codes; {@code null} otherwise.
     */
    private String denied(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof java.sql.SQLException sql) {
                return FenceSql.deniedFix(sql.getSQLState(), sql.getErrorCode(), table);
            }
        }
        return null;
    }

    /**
     * What to do when {@code e} is PostgreSQL refusing a prepared statement of the driver's that the connection does
     * not have, or already has under its name ({@code 26000}, {@code 42P05}): a connection pooler in transaction mode
     * (pgbouncer) hands each transaction a server connection of its own, so the driver's server-side statements
     * (after {@code prepareThreshold} uses, 5 by default) land where they were not prepared. Empty otherwise; the
     * table may be fine.
     */
    static String poolerHint(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof java.sql.SQLException sql
                    && ("42P05".equals(sql.getSQLState()) || "26000".equals(sql.getSQLState()))) {
                return ". The driver's prepared statements are not where it prepared them, as behind a connection "
                        + "pooler in transaction mode (pgbouncer): add prepareThreshold=0 to the JDBC URL, or turn "
                        + "on the pooler's prepared-statement support (pgbouncer 1.21 and later: "
                        + "max_prepared_statements); the table itself may be fine";
            }
        }
        return "";
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return oneLine(root.getMessage());
    }

    /**
     * {@code message} on one line, for a sentence of ours around it: PostgreSQL's messages carry their detail on
     * lines of their own ({@code "\n  Position: 15"}); {@code null} stays {@code null}.
     */
    static String oneLine(String message) {
        return message == null ? null : message.strip().replaceAll("\\s*\\R\\s*", "; ");
    }

    private static String lower(String s) {
        return s == null ? null : s.toLowerCase(Locale.ROOT);
    }

    private static String upper(String s) {
        return s == null ? null : s.toUpperCase(Locale.ROOT);
    }

    /** Whether {@code column} holds an instant (see {@link JdbcTable.ColumnNeed#INSTANT}) on this database. */
    private boolean instant(Column column) {
        String name = column.typeName().toUpperCase(Locale.ROOT);
        return switch (dialect) {
            case MARIADB -> name.startsWith("TIMESTAMP");
            case POSTGRESQL -> column.type() == Types.TIMESTAMP_WITH_TIMEZONE || name.equals("TIMESTAMPTZ");
            case H2 -> column.type() == Types.TIMESTAMP_WITH_TIMEZONE || name.contains("WITH TIME ZONE");
        };
    }

    private record Column(int type, String typeName, long size) {
        String describe() {
            return type == Types.BIGINT || type == Types.INTEGER || type == Types.SMALLINT
                    || type == Types.TINYINT ? typeName.toUpperCase(Locale.ROOT)
                    : typeName.toUpperCase(Locale.ROOT) + "(" + size + ")";
        }
    }
}

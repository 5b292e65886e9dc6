package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.FenceStoreException;
import dev.fencing.token.FencingToken;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.Types;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The startup check of a fence or lease table, the same for both: create it first when configured to, check the
 * column types and widths, write probe rows inside a transaction it rolls back (the table exists and works, and
 * resources differing only in case, accents or trailing spaces get rows of their own), and read the unique key on
 * {@code resource}. Once passed, it is not repeated; a failed check is repeated on the next call. Every probe runs in
 * a transaction of its own, so a lazy first check never joins (or marks rollback-only) a caller's transaction.
 */
final class TableVerifier {

    private static final Log log = LogFactory.getLog(TableVerifier.class);

    /** The probe resource; its variants differ only in case, accents or a trailing space. */
    static final String PROBE = "fencing-startup-probe:Ab";

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
    private volatile boolean verified;

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
        synchronized (this) {
            if (verified) {
                return;
            }
            if (createTable) {
                try {
                    probeTransactions.executeWithoutResult(status ->
                            jdbc.execute(kind.createTableSql(dialect, table)));
                } catch (DataAccessException | TransactionException e) {
                    throw new FencingConfigurationException(kind.what() + " '" + table + "' could not be created on "
                            + dialect.productName() + ": " + rootMessage(e), e);
                }
            }
            inspect(this::requireColumns);
            probe();
            inspect(this::requireUniqueResourceKey);
            verified = true;
        }
        log.info(kind.owner() + ": table '" + table + "' on " + dialect.productName() + " verified"
                + verifiedDetail.get());
    }

    /** Reads the table's metadata in a transaction of its own. */
    private void inspect(Runnable check) {
        try {
            probeTransactions.executeWithoutResult(status -> check.run());
        } catch (DataAccessException | TransactionException e) {
            throw new FencingConfigurationException(kind.what() + " '" + table + "' could not be inspected on "
                    + dialect.productName() + ": " + rootMessage(e), e);
        }
    }

    /**
     * Writes probe rows inside a transaction that is rolled back: the table exists, has the columns and works, and
     * resources that differ only in case, accents or trailing spaces get rows of their own (the resource column
     * compares exactly).
     */
    private void probe() {
        try {
            probeTransactions.executeWithoutResult(status -> {
                status.setRollbackOnly();
                probe.write(PROBE);
                String otherCase = PROBE.replace("Ab", "aB");
                requireDistinct(otherCase, "compares case-insensitively ('" + PROBE + "' and '" + otherCase
                        + "' are one row)");
                requireDistinct(PROBE + " ", "ignores trailing spaces (PAD SPACE: '" + PROBE + "' and '" + PROBE
                        + " ' are one row)");
                String accented = PROBE.replace("Ab", "\u00c4b");
                requireDistinct(accented, "compares accent-insensitively ('" + PROBE + "' and '" + accented
                        + "' are one row)");
            });
        } catch (FenceStoreException | DataAccessException | TransactionException e) {
            throw new FencingConfigurationException(kind.what() + " '" + table + "' is missing or unusable on "
                    + dialect.productName() + " (" + rootMessage(e) + "). Create it with the script "
                    + kind.script(dialect) + " (see the README), or build the " + kind.ownerNoun()
                    + " with createTableIfMissing(true)", e);
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
    private void requireColumns() {
        Map<String, Column> columns = jdbc.execute((Connection c) -> {
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
        if (columns == null || columns.isEmpty()) {
            return;
        }
        String script = kind.script(dialect);
        for (Map.Entry<String, JdbcTable.ColumnNeed> need : kind.columns().entrySet()) {
            String name = need.getKey();
            Column column = columns.get(name);
            if (column == null) {
                throw new FencingConfigurationException(kind.what() + " '" + table + "' has no column '" + name
                        + "'; recreate it with " + script);
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
            };
            if (problem != null) {
                throw new FencingConfigurationException(kind.what() + " '" + table + "' column '" + name + "' "
                        + problem + "; fix it with: " + dialect.alterColumnSql(table, name) + " (or recreate the "
                        + "table with " + script + ")");
            }
        }
    }

    /**
     * Without a unique key on {@code resource}, two first uses of one resource could both insert, and later
     * statements would read the wrong row. The probe cannot see that on every database (H2's MERGE matches by its
     * ON clause), so the key is read from the metadata.
     */
    private void requireUniqueResourceKey() {
        Boolean found = jdbc.execute((Connection c) -> {
            DatabaseMetaData meta = c.getMetaData();
            String schema = table.contains(".") ? table.substring(0, table.indexOf('.')) : null;
            String name = table.contains(".") ? table.substring(table.indexOf('.') + 1) : table;
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
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return root.getMessage();
    }

    private static String lower(String s) {
        return s == null ? null : s.toLowerCase(Locale.ROOT);
    }

    private static String upper(String s) {
        return s == null ? null : s.toUpperCase(Locale.ROOT);
    }

    private record Column(int type, String typeName, long size) {
        String describe() {
            return type == Types.BIGINT || type == Types.INTEGER || type == Types.SMALLINT
                    || type == Types.TINYINT ? typeName.toUpperCase(Locale.ROOT)
                    : typeName.toUpperCase(Locale.ROOT) + "(" + size + ")";
        }
    }
}

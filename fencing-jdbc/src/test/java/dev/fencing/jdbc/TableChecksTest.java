package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.issuer.Lease;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The table checks of {@link JdbcFenceStore#verify()}: distinct resources stay distinct on every database, and a
 * table that would merge them (a case-insensitive or space-padding {@code resource} column) or fail at run time
 * (too narrow a text column, a 32-bit {@code max_seen}) is refused at startup with the column and the fix.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class TableChecksTest {

    private final Map<Database, HikariDataSource> pools = new EnumMap<>(Database.class);
    private final List<Runnable> cleanup = new ArrayList<>();

    private HikariDataSource pool(Database database) {
        return pools.computeIfAbsent(database, d -> d.newPool(4));
    }

    private JdbcTemplate jdbc(Database database) {
        return new JdbcTemplate(pool(database));
    }

    @AfterAll
    void close() {
        cleanup.forEach(Runnable::run);
        pools.values().forEach(HikariDataSource::close);
    }

    private String table(Database database, String prefix) {
        String table = Database.uniqueTable(prefix);
        cleanup.add(() -> jdbc(database).execute("DROP TABLE IF EXISTS " + table));
        return table;
    }

    private static String timestamp(Database database) {
        return database == Database.MARIADB ? "TIMESTAMP(6)" : "TIMESTAMP WITH TIME ZONE";
    }

    /** A fence table as a user might write it by hand, with the given resource, max_seen and holder types. */
    private String fenceTable(Database database, String resourceType, String maxSeenType, String holderType) {
        String table = table(database, "fence");
        jdbc(database).execute("CREATE TABLE " + table + " (resource " + resourceType + " NOT NULL PRIMARY KEY, "
                + "max_seen " + maxSeenType + " NOT NULL, holder " + holderType + ", updated_at "
                + timestamp(database) + " NOT NULL)");
        return table;
    }

    private FencingConfigurationException refusal(Database database, String table) {
        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(
                () -> JdbcFenceStore.builder(pool(database)).table(table).build().verify());
        assertThat(thrown).as("verify() of " + table).isInstanceOf(FencingConfigurationException.class);
        return (FencingConfigurationException) thrown;
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void resourcesDifferingInCaseAccentsOrTrailingSpacesStayDistinctInTheFenceTable(Database database)
            throws Throwable {
        String table = table(database, "fence");
        JdbcFenceStore store = JdbcFenceStore.builder(pool(database)).table(table).createTableIfMissing(true).build();
        String[][] pairs = {{"probe:Ab", "probe:aB"}, {"muller", "M\u00fcller"}, {"muller", "m\u00fcller"},
                {"x", "x "}};
        for (String[] pair : pairs) {
            String first = pair[0] + "-" + System.nanoTime();
            String second = pair[1] + "-" + first.substring(pair[0].length() + 1);
            if (pair[1].endsWith(" ")) {
                first = pair[0] + System.nanoTime();
                second = first + " ";
            }
            String a = first;
            String b = second;
            store.fence(a, new FencingToken(a, 10, "h1"), () -> null);
            // a merged row would hold max_seen 10 and refuse 5 as stale
            assertThat(store.fence(b, new FencingToken(b, 5, "h2"), () -> "accepted"))
                    .as("'" + b + "' after '" + a + "'")
                    .isEqualTo("accepted");
            assertThat(new JdbcFenceAdmin(store).maxSeen(a)).hasValue(10);
            assertThat(new JdbcFenceAdmin(store).maxSeen(b)).hasValue(5);
        }
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void resourcesDifferingInCaseOrTrailingSpacesGetLeasesOfTheirOwn(Database database) {
        String table = table(database, "lease");
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(pool(database)).table(table).createTableIfMissing(true)
                .build();
        String base = "lease" + System.nanoTime();
        for (String[] pair : new String[][] {{base + ":Ab", base + ":aB"}, {base + "x", base + "x "},
                {base + "u", base + "\u00fc"}}) {
            Lease first = issuer.acquire(pair[0], Duration.ofSeconds(5));
            // a merged row would be held by the first lease: this acquire would time out
            Lease second = issuer.acquire(pair[1], Duration.ofSeconds(2));
            assertThat(second.token().resource()).isEqualTo(pair[1]);
            second.close();
            first.close();
        }
    }

    @Test
    void aMariaDbTableInTheServersDefaultCollationIsRefused() {
        // the DDL shipped before: no collation, so the server's default (utf8mb4_general_ci)
        String table = fenceTable(Database.MARIADB, "VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
                "BIGINT", "VARCHAR(256)");
        assertThat(refusal(Database.MARIADB, table)).hasMessageContaining(table)
                .hasMessageContaining("column 'resource' compares case-insensitively")
                .hasMessageContaining("ALTER TABLE " + table + " MODIFY resource VARCHAR(256) CHARACTER SET utf8mb4 "
                        + "COLLATE utf8mb4_nopad_bin NOT NULL");
    }

    /**
     * A fence or lease table on a non-transactional engine (Aria) takes part in no transaction: a new user's trial
     * had a stale write commit after a newer one, and a rolled-back write keep its max_seen. Refused, naming the
     * engine and the fix; the shipped script's table (InnoDB) passes.
     */
    @Test
    void aMariaDbTableOnANonTransactionalEngineIsRefused() {
        String fence = table(Database.MARIADB, "fence");
        jdbc(Database.MARIADB).execute("CREATE TABLE " + fence + " (resource VARCHAR(256) CHARACTER SET utf8mb4 "
                + "COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY, max_seen BIGINT NOT NULL, holder VARCHAR(256), "
                + "updated_at TIMESTAMP(6) NOT NULL) ENGINE=Aria");
        assertThat(refusal(Database.MARIADB, fence)).hasMessageContaining("Fence table '" + fence + "'")
                .hasMessageContaining("uses the Aria storage engine")
                .hasMessageContaining("ALTER TABLE " + fence + " ENGINE=InnoDB");
        jdbc(Database.MARIADB).execute("ALTER TABLE " + fence + " ENGINE=InnoDB");
        JdbcFenceStore.builder(pool(Database.MARIADB)).table(fence).build().verify();

        String lease = table(Database.MARIADB, "lease");
        jdbc(Database.MARIADB).execute("CREATE TABLE " + lease + " (resource VARCHAR(256) CHARACTER SET utf8mb4 "
                + "COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY, holder VARCHAR(256), token BIGINT NOT NULL, "
                + "expires_at TIMESTAMP(6) NULL) ENGINE=Aria");
        assertThatThrownBy(() -> JdbcTokenIssuer.builder(pool(Database.MARIADB)).table(lease).build().verify())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Lease table '" + lease + "' uses the Aria storage engine");
    }

    /**
     * An UNLOGGED PostgreSQL fence or lease table is emptied by crash recovery (and never replicated): every max_seen
     * gone, a zombie's old token would be accepted as a resource's first. A new user's trial had one verified.
     */
    @Test
    void anUnloggedPostgreSqlTableIsRefused() {
        String fence = table(Database.POSTGRESQL, "fence");
        jdbc(Database.POSTGRESQL).execute("CREATE UNLOGGED TABLE " + fence + " (resource VARCHAR(256) NOT NULL "
                + "PRIMARY KEY, max_seen BIGINT NOT NULL, holder VARCHAR(256), updated_at TIMESTAMP WITH TIME ZONE "
                + "NOT NULL)");
        assertThat(refusal(Database.POSTGRESQL, fence)).hasMessageContaining("Fence table '" + fence + "' is UNLOGGED")
                .hasMessageContaining("ALTER TABLE " + fence + " SET LOGGED");
        jdbc(Database.POSTGRESQL).execute("ALTER TABLE " + fence + " SET LOGGED");
        JdbcFenceStore.builder(pool(Database.POSTGRESQL)).table(fence).build().verify();

        String lease = table(Database.POSTGRESQL, "lease");
        jdbc(Database.POSTGRESQL).execute("CREATE UNLOGGED TABLE " + lease + " (resource VARCHAR(256) NOT NULL "
                + "PRIMARY KEY, holder VARCHAR(256), token BIGINT NOT NULL, expires_at TIMESTAMP WITH TIME ZONE)");
        assertThatThrownBy(() -> JdbcTokenIssuer.builder(pool(Database.POSTGRESQL)).table(lease).build().verify())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Lease table '" + lease + "' is UNLOGGED");
    }

    /**
     * A lease table whose expires_at has no time zone (PostgreSQL's and H2's TIMESTAMP, MariaDB's DATETIME) is read in
     * each session's zone: an instance in UTC+5 saw a lease another took in UTC as expired 5 h ago and took it too,
     * two holders of one lock (a review found it). Refused, naming the fix; the fixed table passes.
     */
    @ParameterizedTest
    @EnumSource(Database.class)
    void aLeaseTableWhoseExpiryHasNoTimeZoneIsRefused(Database database) {
        String lease = table(database, "lease");
        String text = database == Database.MARIADB
                ? "VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin" : "VARCHAR(256)";
        String local = database == Database.MARIADB ? "DATETIME(6)" : "TIMESTAMP";
        jdbc(database).execute("CREATE TABLE " + lease + " (resource " + text + " NOT NULL PRIMARY KEY, holder "
                + text + ", token BIGINT NOT NULL, expires_at " + local + " NULL)"
                + (database == Database.MARIADB ? " ENGINE=InnoDB" : ""));
        assertThatThrownBy(() -> JdbcTokenIssuer.builder(pool(database)).table(lease).build().verify())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Lease table '" + lease + "' column 'expires_at'")
                .hasMessageContaining("two zones would both hold one lock");
        jdbc(database).execute(JdbcDialect.valueOf(database.name()).alterColumnSql(lease, "expires_at"));
        JdbcTokenIssuer.builder(pool(database)).table(lease).build().verify();
    }

    /**
     * MariaDB: a unique key on a prefix of resource (PRIMARY KEY (resource(64))) makes resources that share the prefix
     * share one row, whose max_seen refuses the other's tokens; JDBC's index metadata does not show the prefix (a
     * review had one verified).
     */
    @Test
    void aMariaDbKeyOnAPrefixOfResourceIsRefused() {
        String fence = table(Database.MARIADB, "fence");
        jdbc(Database.MARIADB).execute("CREATE TABLE " + fence + " (resource VARCHAR(256) CHARACTER SET utf8mb4 "
                + "COLLATE utf8mb4_nopad_bin NOT NULL, max_seen BIGINT NOT NULL, holder VARCHAR(256) CHARACTER SET "
                + "utf8mb4 COLLATE utf8mb4_nopad_bin, updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), "
                + "PRIMARY KEY (resource(64))) ENGINE=InnoDB");
        assertThat(refusal(Database.MARIADB, fence)).hasMessageContaining("has its unique key on a prefix of "
                + "'resource' only");
        jdbc(Database.MARIADB).execute("ALTER TABLE " + fence + " DROP PRIMARY KEY, ADD PRIMARY KEY (resource)");
        JdbcFenceStore.builder(pool(Database.MARIADB)).table(fence).build().verify();
    }

    /**
     * MariaDB: a second unique key (on holder, say) makes ON DUPLICATE KEY UPDATE update the row that conflicts on it,
     * another resource's: a review had B's stale 15 accepted after B's 20. Refused; an auto-increment surrogate key
     * beside the key on resource is not.
     */
    @Test
    void aMariaDbFenceTableWithAnotherUniqueKeyIsRefused() {
        String fence = table(Database.MARIADB, "fence");
        String text = "VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin";
        jdbc(Database.MARIADB).execute("CREATE TABLE " + fence + " (resource " + text + " NOT NULL PRIMARY KEY, "
                + "max_seen BIGINT NOT NULL, holder " + text + ", updated_at TIMESTAMP(6) NOT NULL DEFAULT "
                + "CURRENT_TIMESTAMP(6), UNIQUE KEY by_holder (holder)) ENGINE=InnoDB");
        assertThat(refusal(Database.MARIADB, fence)).hasMessageContaining("has a unique key on (holder) besides");
        jdbc(Database.MARIADB).execute("ALTER TABLE " + fence + " DROP INDEX by_holder");
        JdbcFenceStore.builder(pool(Database.MARIADB)).table(fence).build().verify();

        String surrogate = table(Database.MARIADB, "fence");
        jdbc(Database.MARIADB).execute("CREATE TABLE " + surrogate + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
                + "resource " + text + " NOT NULL, max_seen BIGINT NOT NULL, holder " + text + ", updated_at "
                + "TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), UNIQUE KEY by_resource (resource)) "
                + "ENGINE=InnoDB");
        JdbcFenceStore.builder(pool(Database.MARIADB)).table(surrogate).build().verify();
    }

    /**
     * A partitioned fence table keeps its rows in its partitions: UNLOGGED partitions lose them in crash recovery as
     * an UNLOGGED table does, though the parent's own persistence says durable (a review had one verified).
     */
    @Test
    void aPartitionedPostgreSqlTableWithAnUnloggedPartitionIsRefused() {
        String fence = table(Database.POSTGRESQL, "fence");
        jdbc(Database.POSTGRESQL).execute("CREATE TABLE " + fence + " (resource VARCHAR(256) NOT NULL PRIMARY KEY, "
                + "max_seen BIGINT NOT NULL, holder VARCHAR(256), updated_at TIMESTAMP WITH TIME ZONE NOT NULL) "
                + "PARTITION BY HASH (resource)");
        jdbc(Database.POSTGRESQL).execute("CREATE TABLE " + fence + "_0 PARTITION OF " + fence
                + " FOR VALUES WITH (MODULUS 2, REMAINDER 0)");
        jdbc(Database.POSTGRESQL).execute("CREATE UNLOGGED TABLE " + fence + "_1 PARTITION OF " + fence
                + " FOR VALUES WITH (MODULUS 2, REMAINDER 1)");
        assertThat(refusal(Database.POSTGRESQL, fence)).hasMessageContaining("Fence table '" + fence + "' is UNLOGGED")
                .hasMessageContaining("on each UNLOGGED partition");
        jdbc(Database.POSTGRESQL).execute("ALTER TABLE " + fence + "_1 SET LOGGED");
        JdbcFenceStore.builder(pool(Database.POSTGRESQL)).table(fence).build().verify();
    }

    /**
     * Behind a connection pooler in transaction mode (pgbouncer) the driver's server-side prepared statements land on
     * connections that have others of those names: PostgreSQL's "prepared statement "S_2" already exists" was told as a
     * missing table (a helper's trial). Made here without a pooler: the connection already has statements of the
     * driver's names, and the driver prepares on the server from the first use.
     */
    @Test
    void aPreparedStatementClashNamesThePoolerNotTheTable() throws Exception {
        String fence = table(Database.POSTGRESQL, "fence");
        jdbc(Database.POSTGRESQL).execute(FenceSql.POSTGRESQL.createTableSql(fence));
        java.sql.Connection connection = java.sql.DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/test?prepareThreshold=0", "postgres", "");
        try (java.sql.Statement statement = connection.createStatement()) {
            for (int i = 1; i <= 40; i++) {
                statement.execute("PREPARE \"S_" + i + "\" AS SELECT " + i); // the driver's names, quoted: case kept
            }
            connection.unwrap(org.postgresql.PGConnection.class).setPrepareThreshold(1); // from the first use
            org.springframework.jdbc.datasource.SingleConnectionDataSource clashing =
                    new org.springframework.jdbc.datasource.SingleConnectionDataSource(connection, true);
            assertThatThrownBy(() -> JdbcFenceStore.builder(clashing).table(fence).build().verify())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("already exists")
                    .hasMessageContaining("connection pooler in transaction mode (pgbouncer)")
                    .hasMessageContaining("prepareThreshold=0")
                    .hasMessageNotContaining("Create it with the script");
        } finally {
            connection.close();
        }
    }

    /**
     * A table the application's user may only read, or a read-only connection, was reported as "missing or
     * unusable" with the script to create it, the wrong fix (a new user's trial); now the grant or the connection.
     */
    @Test
    void aTableTheApplicationCannotWriteNamesTheGrantOrTheReadOnlyConnection() {
        String fence = table(Database.POSTGRESQL, "fence");
        jdbc(Database.POSTGRESQL).execute(FenceSql.POSTGRESQL.createTableSql(fence));
        String role = "fencing_reader_" + Long.toHexString(System.nanoTime());
        JdbcTemplate admin = jdbc(Database.POSTGRESQL);
        admin.execute("CREATE ROLE " + role + " LOGIN");
        try {
            admin.execute("GRANT SELECT ON " + fence + " TO " + role);
            org.springframework.jdbc.datasource.DriverManagerDataSource reader =
                    new org.springframework.jdbc.datasource.DriverManagerDataSource(
                            "jdbc:postgresql://127.0.0.1:5432/test", role, "");
            assertThatThrownBy(() -> JdbcFenceStore.builder(reader).table(fence).build().verify())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Fence table '" + fence + "' exists but cannot be written")
                    .hasMessageContaining("grant the application's database user SELECT, INSERT, UPDATE and DELETE")
                    .hasMessageNotContaining("Create it with the script");
            org.springframework.jdbc.datasource.DriverManagerDataSource readOnly =
                    new org.springframework.jdbc.datasource.DriverManagerDataSource(
                            "jdbc:postgresql://127.0.0.1:5432/test?options=-c%20default_transaction_read_only=on",
                            "postgres", "");
            assertThatThrownBy(() -> JdbcFenceStore.builder(readOnly).table(fence).build().verify())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("the connection is read-only");
        } finally {
            admin.execute("REVOKE ALL ON " + fence + " FROM " + role);
            admin.execute("DROP ROLE " + role);
        }
    }

    /**
     * Another table named by mistake (the application's own) was reported as missing one column, with an ALTER that
     * would not make it a fence table; now it is named as not a fence table at all.
     */
    @ParameterizedTest
    @EnumSource(Database.class)
    void anotherTableNamedByMistakeIsSaidToBeNoFenceTable(Database database) {
        String notes = table(database, "notes");
        jdbc(database).execute("CREATE TABLE " + notes + " (id BIGINT PRIMARY KEY, txt VARCHAR(100))");
        assertThat(refusal(database, notes)).hasMessageContaining("Fence table '" + notes + "' has none of the columns")
                .hasMessageContaining("it is not a fence table").hasMessageNotContaining("ALTER TABLE");
    }

    @Test
    void aMariaDbTableThatPadsTrailingSpacesIsRefused() {
        // utf8mb4_bin is case-sensitive but PAD SPACE: 'x' = 'x '
        String table = fenceTable(Database.MARIADB, "VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
                "BIGINT", "VARCHAR(256)");
        assertThat(refusal(Database.MARIADB, table)).hasMessageContaining("column 'resource' ignores trailing spaces")
                .hasMessageContaining("utf8mb4_nopad_bin");
    }

    @Test
    void aMariaDbLeaseTableInTheServersDefaultCollationIsRefused() {
        String table = table(Database.MARIADB, "lease");
        jdbc(Database.MARIADB).execute("CREATE TABLE " + table + " (resource VARCHAR(256) CHARACTER SET utf8mb4 "
                + "COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY, holder VARCHAR(256), token BIGINT NOT NULL, "
                + "expires_at TIMESTAMP(6) NULL)");
        assertThatThrownBy(() -> JdbcTokenIssuer.builder(pool(Database.MARIADB)).table(table).build().verify())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Lease table '" + table + "' column 'resource'")
                .hasMessageContaining("utf8mb4_nopad_bin");
    }

    @Test
    void aPostgreSqlResourceColumnWithACaseInsensitiveCollationIsRefused() {
        JdbcTemplate jdbc = jdbc(Database.POSTGRESQL);
        String collation = Database.uniqueTable("ci");
        jdbc.execute("CREATE COLLATION " + collation
                + " (provider = icu, locale = 'und-u-ks-level2', deterministic = false)");
        String table = Database.uniqueTable("fence");
        try {
            jdbc.execute("CREATE TABLE " + table + " (resource VARCHAR(256) COLLATE " + collation + " NOT NULL "
                    + "PRIMARY KEY, max_seen BIGINT NOT NULL, holder VARCHAR(256), "
                    + "updated_at TIMESTAMP WITH TIME ZONE NOT NULL)");
            assertThat(refusal(Database.POSTGRESQL, table)).hasMessageContaining("column 'resource' compares")
                    .hasMessageContaining("ALTER TABLE " + table + " ALTER COLUMN resource TYPE VARCHAR(256)");
        } finally {
            jdbc.execute("DROP TABLE IF EXISTS " + table); // before the collation it depends on
            jdbc.execute("DROP COLLATION IF EXISTS " + collation);
        }
    }

    /**
     * MariaDB's UCA 14.0 collations that are accent- and case-sensitive and no-pad pass the case, accent and padding
     * probes, yet compare a composed {@code \u00c5} equal to {@code A} and a combining ring, and ignore a
     * zero-width space: {@code caf\u00e9} typed two ways, or a key with an invisible character, would share one row.
     */
    @Test
    void aMariaDbUcaCollationThatFoldsCanonicalEquivalentsIsRefused() {
        String table = fenceTable(Database.MARIADB, "VARCHAR(256) CHARACTER SET utf8mb4 COLLATE "
                + "utf8mb4_uca1400_nopad_as_cs", "BIGINT", "VARCHAR(256)");
        assertThat(refusal(Database.MARIADB, table))
                .hasMessageContaining("column 'resource' compares canonically equivalent spellings as one")
                .hasMessageContaining("utf8mb4_nopad_bin");
    }

    /** A lease table in that collation would hand one lease to two resources: refused the same way. */
    @Test
    void aMariaDbLeaseTableInAUcaCollationIsRefused() {
        String table = table(Database.MARIADB, "lease");
        jdbc(Database.MARIADB).execute("CREATE TABLE " + table + " (resource VARCHAR(256) CHARACTER SET utf8mb4 "
                + "COLLATE utf8mb4_uca1400_nopad_as_cs NOT NULL PRIMARY KEY, holder VARCHAR(256), "
                + "token BIGINT NOT NULL, expires_at TIMESTAMP(6) NULL)");
        assertThatThrownBy(() -> JdbcTokenIssuer.builder(pool(Database.MARIADB)).table(table).build().verify())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Lease table '" + table + "' column 'resource' compares canonically");
    }

    /**
     * A PostgreSQL ICU collation that is nondeterministic at the default (tertiary) strength is case- and
     * accent-sensitive and keeps trailing spaces, but compares canonically equivalent spellings equal and ignores
     * zero-width characters: refused.
     */
    @Test
    void aPostgreSqlNondeterministicTertiaryCollationIsRefused() {
        JdbcTemplate jdbc = jdbc(Database.POSTGRESQL);
        String collation = Database.uniqueTable("nd");
        jdbc.execute("CREATE COLLATION " + collation + " (provider = icu, locale = 'und', deterministic = false)");
        String table = Database.uniqueTable("fence");
        try {
            jdbc.execute("CREATE TABLE " + table + " (resource VARCHAR(256) COLLATE " + collation + " NOT NULL "
                    + "PRIMARY KEY, max_seen BIGINT NOT NULL, holder VARCHAR(256), "
                    + "updated_at TIMESTAMP WITH TIME ZONE NOT NULL)");
            assertThat(refusal(Database.POSTGRESQL, table))
                    .hasMessageContaining("column 'resource' compares canonically equivalent spellings as one")
                    .hasMessageContaining("ALTER TABLE " + table + " ALTER COLUMN resource TYPE VARCHAR(256)");
        } finally {
            jdbc.execute("DROP TABLE IF EXISTS " + table);
            jdbc.execute("DROP COLLATION IF EXISTS " + collation);
        }
    }

    /**
     * An H2 database whose collation is a language's ({@code SET COLLATION ENGLISH}, tertiary strength) compares a
     * composed and a decomposed spelling equal and ignores a zero-width space, even in a table made from the shipped
     * script: refused.
     */
    @Test
    void theShippedTableOnAnH2DatabaseWithALanguageCollationIsRefused() throws Exception {
        String url = "jdbc:h2:mem:collation" + System.nanoTime() + ";DB_CLOSE_DELAY=-1";
        org.springframework.jdbc.datasource.DriverManagerDataSource h2 =
                new org.springframework.jdbc.datasource.DriverManagerDataSource(url);
        JdbcTemplate jdbc = new JdbcTemplate(h2);
        jdbc.execute("SET COLLATION ENGLISH STRENGTH TERTIARY");
        try {
            Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> JdbcFenceStore.builder(h2)
                    .createTableIfMissing(true).build().verify());
            assertThat(thrown).isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("column 'resource' compares canonically equivalent spellings as one");
        } finally {
            jdbc.execute("SHUTDOWN");
        }
    }

    @Test
    void anH2IgnoreCaseResourceColumnIsRefused() {
        String table = fenceTable(Database.H2, "VARCHAR_IGNORECASE(256)", "BIGINT", "VARCHAR(256)");
        assertThat(refusal(Database.H2, table)).hasMessageContaining("column 'resource' compares case-insensitively");
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = {"POSTGRESQL", "H2"}) // MariaDB's CHAR stops at 255
    void aFixedLengthResourceColumnIsRefused(Database database) {
        String table = fenceTable(database, "CHAR(256)", "BIGINT", "VARCHAR(256)");
        assertThat(refusal(database, table)).hasMessageContaining("column 'resource'")
                .hasMessageContaining("'x' and 'x ' would be one value");
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aNarrowResourceColumnIsRefusedNamingTheColumnAndTheFix(Database database) {
        String table = fenceTable(database, "VARCHAR(32)", "BIGINT", "VARCHAR(256)");
        JdbcDialect dialect = JdbcDialect.valueOf(database.name());
        assertThat(refusal(database, table)).hasMessageContaining("Fence table '" + table + "' column 'resource'")
                .hasMessageContaining("(32)").hasMessageContaining("256")
                .hasMessageContaining(dialect.alterColumnSql(table, "resource"));
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aNarrowHolderColumnIsRefused(Database database) {
        String table = fenceTable(database, "VARCHAR(256)", "BIGINT", "VARCHAR(40)");
        assertThat(refusal(database, table)).hasMessageContaining("column 'holder'").hasMessageContaining("(40)");
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aThirtyTwoBitMaxSeenIsRefusedNamingTheColumnAndTheFix(Database database) {
        String table = fenceTable(database, "VARCHAR(256)", "INTEGER", "VARCHAR(256)");
        JdbcDialect dialect = JdbcDialect.valueOf(database.name());
        assertThat(refusal(database, table)).hasMessageContaining("column 'max_seen'")
                .hasMessageContaining("need BIGINT")
                .hasMessageContaining(dialect.alterColumnSql(table, "max_seen"));
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aLeaseTableThatCannotHoldEveryResourceOrTokenIsRefused(Database database) {
        String narrow = table(database, "lease");
        String integer = table(database, "lease");
        String ts = database == Database.MARIADB ? "TIMESTAMP(6) NULL" : "TIMESTAMP WITH TIME ZONE";
        jdbc(database).execute("CREATE TABLE " + narrow + " (resource VARCHAR(32) NOT NULL PRIMARY KEY, "
                + "holder VARCHAR(256), token BIGINT NOT NULL, expires_at " + ts + ")");
        jdbc(database).execute("CREATE TABLE " + integer + " (resource VARCHAR(256) NOT NULL PRIMARY KEY, "
                + "holder VARCHAR(256), token INTEGER NOT NULL, expires_at " + ts + ")");
        assertThatThrownBy(() -> JdbcTokenIssuer.builder(pool(database)).table(narrow).build().verify())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Lease table '" + narrow + "' column 'resource'").hasMessageContaining("(32)");
        assertThatThrownBy(() -> JdbcTokenIssuer.builder(pool(database)).table(integer).build().verify())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Lease table '" + integer + "' column 'token'")
                .hasMessageContaining("BIGINT");
    }

    /**
     * A fence or lease table without a key on {@code resource} (two first uses could both insert a row) is refused as
     * such on every database: the key is read before the probe, whose statement (PostgreSQL's ON CONFLICT) would fail
     * in the database's words (a plain-Java trial got "missing or unusable" on PostgreSQL).
     */
    @ParameterizedTest
    @EnumSource(Database.class)
    void aFenceOrLeaseTableWithoutAKeyOnResourceIsRefusedNamingTheKey(Database database) {
        String ts = database == Database.MARIADB ? "TIMESTAMP(6) NULL" : "TIMESTAMP WITH TIME ZONE";
        String resource = " (resource VARCHAR(256)"
                + (database == Database.MARIADB ? " CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin" : "")
                + " NOT NULL";
        String lease = table(database, "nokeylease");
        jdbc(database).execute("CREATE TABLE " + lease + resource + ", holder VARCHAR(256), token BIGINT NOT NULL, "
                + "expires_at " + ts + ")");
        String fence = table(database, "nokeyfence");
        jdbc(database).execute("CREATE TABLE " + fence + resource + ", max_seen BIGINT NOT NULL, holder VARCHAR(256), "
                + "updated_at " + ts + " NOT NULL)");
        assertThatThrownBy(() -> JdbcTokenIssuer.builder(pool(database)).table(lease).build().verify())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Lease table '" + lease + "' has no primary key or unique index on 'resource'");
        assertThatThrownBy(() -> JdbcFenceStore.builder(pool(database)).table(fence).build().verify())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Fence table '" + fence + "' has no primary key or unique index on 'resource'");
    }

    /**
     * With createTableIfMissing (the starter's initialize-schema=always), a misspelt table name created a second,
     * empty fence table, and the startup line said only "verified (created first if it was missing)" (a new user's
     * trial): the line now says when this start created the table, naming it, and that it existed otherwise.
     */
    @ParameterizedTest
    @EnumSource(Database.class)
    void theStartupLineSaysWhenItCreatedTheTable(Database database) {
        String table = table(database, "created");
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                TableVerifier.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> events =
                new ch.qos.logback.core.read.ListAppender<>();
        events.start();
        ch.qos.logback.classic.Level level = logger.getLevel();
        logger.setLevel(ch.qos.logback.classic.Level.INFO); // the tests' logback-test.xml keeps WARN and above
        logger.addAppender(events);
        try {
            JdbcFenceStore.builder(pool(database)).table(table).createTableIfMissing(true).build().verify();
            JdbcFenceStore.builder(pool(database)).table(table).createTableIfMissing(true).build().verify();
        } finally {
            logger.detachAppender(events);
            logger.setLevel(level);
        }
        List<String> lines = events.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                .filter(line -> line.contains("'" + table + "'")).toList();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).contains("table '" + table + "' on ").contains("created now (it did not exist)")
                .contains("It starts empty: if other instances use a table of another name");
        assertThat(lines.get(1)).contains("verified (it existed)").doesNotContain("created now");
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aStoreNeverVerifiedVerifiesBeforeItsFirstCheckFailingClosedUntilTheTableIsThere(Database database)
            throws Throwable {
        String table = table(database, "late");
        JdbcFenceStore store = JdbcFenceStore.builder(pool(database)).table(table).build(); // no table yet: fine
        String r = "late-" + System.nanoTime();
        Guarded guarded = new Guarded(store, r);
        FencingToken token = new FencingToken(r, 3, "a");
        assertThatThrownBy(() -> guarded.call(token, () -> "written"))
                .isInstanceOfSatisfying(dev.fencing.store.FenceStoreException.class,
                        e -> assertThat(e.presented()).isSameAs(token))
                .hasMessageContaining(table).hasMessageContaining("missing or unusable")
                .hasCauseInstanceOf(FencingConfigurationException.class);
        assertThat(guarded.checks("error")).isEqualTo(1);
        assertThat(guarded.checks("accepted")).isZero();
        jdbc(database).execute(JdbcDialect.valueOf(database.name()).createTableSql(table)); // created later
        assertThat(guarded.call(token, () -> "written")).isEqualTo("written");
        assertThat(new JdbcFenceAdmin(store).maxSeen(r)).hasValue(3);
    }

    /**
     * The lease table gone after startup: every acquisition fails at once saying so, instead of retrying a statement
     * that cannot succeed until the timeout and reporting "within 10000 ms" (a rollout trial's 503 said retry later).
     */
    @ParameterizedTest
    @EnumSource(Database.class)
    void aLeaseTableGoneAfterStartupFailsEachAcquisitionAtOnceNamingIt(Database database) {
        String table = table(database, "gonelease");
        jdbc(database).execute(JdbcTable.LEASE.createTableSql(JdbcDialect.valueOf(database.name()), table));
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(pool(database)).table(table).build();
        issuer.verify();
        jdbc(database).execute("DROP TABLE " + table);
        assertThatThrownBy(() -> issuer.acquire("gone", Duration.ofSeconds(30)))
                .isInstanceOf(dev.fencing.issuer.LockAcquisitionException.class)
                .hasMessageContaining("the lease table '" + table + "' is missing or unusable now")
                .hasMessageNotContaining("within")
                .satisfies(e -> assertThat(((dev.fencing.issuer.LockAcquisitionException) e).retryable())
                        .as("no retry helps until the table is back").isFalse());
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void anIssuerNeverVerifiedChecksItsLeaseTableBeforeTheFirstAcquire(Database database) {
        String table = table(database, "latelease");
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(pool(database)).table(table).build(); // no table yet: fine
        assertThatThrownBy(() -> issuer.acquire("late", Duration.ofSeconds(1)))
                .isInstanceOf(dev.fencing.issuer.LockAcquisitionException.class)
                .hasMessageContaining("Lease table '" + table + "' is missing or unusable")
                // a table of another name than the script's: the script's name is to be replaced (a trial ran it as is)
                .hasMessageContaining("with '" + table + "' in place of its default name 'fencing_lease'")
                .hasCauseInstanceOf(FencingConfigurationException.class)
                .cause().as("one line, also where the database's message has several (PostgreSQL's Position)")
                .hasMessageNotContaining("\n");
        jdbc(database).execute(JdbcTable.LEASE.createTableSql(JdbcDialect.valueOf(database.name()), table));
        Lease lease = issuer.acquire("late", Duration.ofSeconds(5));
        assertThat(lease.token().value()).isEqualTo(1);
        lease.close();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void theShippedTableHoldsAMaximumLengthResourceAndA64BitToken(Database database) throws Throwable {
        String table = table(database, "fence");
        JdbcFenceStore store = JdbcFenceStore.builder(pool(database)).table(table).createTableIfMissing(true).build();
        store.verify();
        assertThat(store.maxResourceLength()).isEqualTo(FencingToken.MAX_PART_LENGTH);
        String longest = "r".repeat(FencingToken.MAX_PART_LENGTH - 1) + "\u00fc";
        String holder = "h".repeat(FencingToken.MAX_PART_LENGTH);
        long czxid = (1L << 32) + 7;
        assertThat(store.fence(longest, new FencingToken(longest, czxid, holder), () -> "ok")).isEqualTo("ok");
        assertThat(new JdbcFenceAdmin(store).maxSeen(longest)).hasValue(czxid);
    }
}

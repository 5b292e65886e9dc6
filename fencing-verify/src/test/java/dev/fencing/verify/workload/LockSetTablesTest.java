package dev.fencing.verify.workload;

import dev.fencing.verify.database.Database;
import dev.fencing.verify.database.DatabaseKind;
import dev.fencing.verify.database.TablesLeft;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The run's tables on MariaDB, and split over two databases: created where they belong, read, dropped. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LockSetTablesTest {

    private static final Database PG = Database.defaultOf(DatabaseKind.POSTGRESQL);
    private static final Database MARIA = Database.defaultOf(DatabaseKind.MARIADB);

    @Test
    void onMariaDbTheTablesAreCreatedReadAndDropped() throws Exception {
        String prefix = prefix();
        LockSetTables tables = new LockSetTables(MARIA, null, prefix);
        try {
            tables.create();
            assertThat(TablesLeft.count(MARIA, prefix)).isEqualTo(5);
            assertThat(tables.readSet()).isEmpty();
            assertThat(tables.readCounter(0)).isZero();
            // the append log numbers its rows itself (AUTO_INCREMENT on MariaDB), read back in that order
            try (Connection c = MARIA.connect(); Statement s = c.createStatement()) {
                s.executeUpdate("INSERT INTO " + tables.append() + " (resource, token, process, op) VALUES "
                        + "('set', 7, 1, 0), ('set', NULL, 2, 4)");
            }
            assertThat(tables.readAppends()).extracting(r -> r.token()).containsExactly(7L, null);
            // a set far larger than MariaDB's TEXT (64 KB) fits: the column is LONGTEXT
            List<Long> big = LongStream.rangeClosed(1, 20_000).map(n -> 9_000_000 + n).boxed().toList();
            try (Connection c = MARIA.connect(); Statement s = c.createStatement()) {
                s.executeUpdate("UPDATE " + tables.set() + " SET elements = '" + SetCodec.encode(big) + "'");
                // the fence table is the library's: a resource differing only in case is another row
                s.executeUpdate("INSERT INTO " + tables.fence() + " (resource, max_seen, updated_at) VALUES "
                        + "('a', 1, CURRENT_TIMESTAMP(6)), ('A', 2, CURRENT_TIMESTAMP(6))");
            }
            assertThat(tables.readSet()).hasSize(20_000).endsWith(9_020_000L);
        } finally {
            assertThat((Object) tables.drop()).isNull();
        }
        assertThat(TablesLeft.count(MARIA, prefix)).isZero();
    }

    @Test
    void theLeaseTableGoesToTheLeasesDatabaseAndEveryTableIsDroppedFromBoth() throws Exception {
        String prefix = prefix();
        LockSetTables tables = new LockSetTables(MARIA, PG, prefix);
        try {
            tables.create();
            assertThat(TablesLeft.count(MARIA, prefix)).as("fence, set, counter and append on MariaDB").isEqualTo(4);
            assertThat(TablesLeft.count(PG, prefix)).as("lease on PostgreSQL").isEqualTo(1);
            try (Connection c = PG.connect(); Statement s = c.createStatement()) {
                s.executeQuery("SELECT resource, holder, token, expires_at FROM " + tables.lease()).close();
            }
        } finally {
            assertThat((Object) tables.drop()).isNull();
        }
        assertThat(TablesLeft.count(MARIA, prefix)).isZero();
        assertThat(TablesLeft.count(PG, prefix)).isZero();
    }

    @Test
    void aTableThatCannotBeCreatedIsNamedWithItsDatabase() throws Exception {
        String prefix = prefix();
        try (Connection c = MARIA.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + prefix + "_set (id INT)");     // in the way
        }
        LockSetTables tables = new LockSetTables(MARIA, null, prefix);
        try {
            assertThatThrownBy(tables::create).isInstanceOf(SQLException.class)
                    .hasMessageContaining("cannot create " + prefix + "_set on mariadb at " + MARIA.url());
        } finally {
            assertThat((Object) tables.drop()).isNull();
        }
        assertThat(TablesLeft.count(MARIA, prefix)).isZero();
    }

    @Test
    void aBadPrefixIsRefused() {
        assertThatThrownBy(() -> new LockSetTables(MARIA, null, "Verify; DROP"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Verify; DROP");
    }

    private static String prefix() {
        return "verify_t" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    }
}

package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;

import java.util.EnumMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Compaction reads when a row last advanced ({@code updated_at}): a hand-written fence table without that column
 * fails at startup with the exact {@code ALTER TABLE} to run, and passes once it ran.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RetentionSchemaTest {

    private final Map<Database, HikariDataSource> pools = new EnumMap<>(Database.class);

    @AfterAll
    void close() {
        pools.values().forEach(HikariDataSource::close);
    }

    /** docs/stores.md gives the migration statements for the default table: the ones the startup error shows. */
    @ParameterizedTest
    @EnumSource(JdbcDialect.class)
    void theDocsShowTheStatementTheStartupErrorShows(JdbcDialect dialect) throws java.io.IOException {
        java.nio.file.Path docs = java.nio.file.Path.of("..", "docs", "stores.md");
        assertThat(java.nio.file.Files.readString(docs))
                .contains(dialect.addColumnSql(JdbcFenceStore.DEFAULT_TABLE, "updated_at") + ";");
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aTableWithoutUpdatedAtFailsAtStartupWithTheAlterTableToRun(Database database) {
        HikariDataSource pool = pools.computeIfAbsent(database, d -> d.newPool(3));
        JdbcTemplate jdbc = new JdbcTemplate(pool);
        JdbcDialect dialect = JdbcDialect.valueOf(database.name());
        String table = Database.uniqueTable("noupd");
        String text = database == Database.MARIADB
                ? "VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin" : "VARCHAR(256)";
        jdbc.execute("CREATE TABLE " + table + " (resource " + text
                + " NOT NULL PRIMARY KEY, max_seen BIGINT NOT NULL, holder " + text + ")");
        try {
            String alter = dialect.addColumnSql(table, "updated_at");
            assertThatThrownBy(() -> JdbcFenceStore.builder(pool).table(table).build().verify())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("has no column 'updated_at'")
                    .hasMessageContaining("add it with: " + alter);
            jdbc.execute(alter);
            assertThatCode(() -> JdbcFenceStore.builder(pool).table(table).build().verify())
                    .doesNotThrowAnyException();
        } finally {
            jdbc.execute("DROP TABLE IF EXISTS " + table);
        }
    }
}

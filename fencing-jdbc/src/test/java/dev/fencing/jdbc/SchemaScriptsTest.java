package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.store.sql.FenceSql;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ScriptUtils;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.Arrays;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * The schema scripts shipped in the jar are the one source of the DDL: run as a user runs them (their default table
 * name changed, as the README tells), they create tables that pass {@code verify()} on every database; and the
 * statement the store and issuer run for {@code createTableIfMissing(true)} is the script's.
 */
class SchemaScriptsTest {

    static Stream<Arguments> scripts() {
        return Arrays.stream(Database.values())
                .flatMap(database -> Stream.of(JdbcTable.values()).map(kind -> Arguments.of(database, kind)));
    }

    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("scripts")
    void theShippedScriptCreatesATableThatPassesVerify(Database database, JdbcTable kind) throws IOException {
        JdbcDialect dialect = JdbcDialect.valueOf(database.name());
        String table = Database.uniqueTable("script");
        String script = read(kind.resource(dialect)).replace(kind.defaultName(), table);
        try (HikariDataSource pool = database.newPool(2)) {
            JdbcTemplate jdbc = new JdbcTemplate(pool);
            try {
                jdbc.execute((Connection c) -> {
                    ScriptUtils.executeSqlScript(c, new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8)));
                    return null;
                });
                if (kind == JdbcTable.FENCE) {
                    assertThatCode(() -> JdbcFenceStore.builder(pool).table(table).build().verify())
                            .doesNotThrowAnyException();
                } else {
                    assertThatCode(() -> JdbcTokenIssuer.builder(pool).table(table).build().verify())
                            .doesNotThrowAnyException();
                }
            } finally {
                jdbc.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDialect.class)
    void createTableIfMissingRunsTheScriptsStatementUnderTheConfiguredName(JdbcDialect dialect) throws IOException {
        for (JdbcTable kind : JdbcTable.values()) {
            String statement = read(kind.resource(dialect)).lines().filter(l -> !l.startsWith("--"))
                    .reduce("", (a, b) -> a + b + "\n").trim();
            assertThat(kind.createTableSql(dialect, kind.defaultName()) + ";").isEqualTo(statement);
            assertThat(kind.createTableSql(dialect, "app.fence_2"))
                    .isEqualTo(statement.substring(0, statement.length() - 1)
                            .replace("EXISTS " + kind.defaultName() + " (", "EXISTS app.fence_2 ("))
                    .doesNotContain(kind.defaultName());
        }
        assertThat(dialect.createTableSql("t")).isEqualTo(JdbcTable.FENCE.createTableSql(dialect, "t"));
    }

    /** The jar's fence scripts are fencing-core's, copied at build time: one copy of the DDL for both stores. */
    @ParameterizedTest
    @EnumSource(JdbcDialect.class)
    void theFenceScriptsAreTheCoreOnes(JdbcDialect dialect) throws IOException {
        FenceSql core = FenceSql.valueOf(dialect.name());
        assertThat(read(JdbcTable.FENCE.resource(dialect))).isEqualTo(read(core.schemaResource()));
        assertThat(dialect.createTableSql("app.fence_2")).isEqualTo(core.createTableSql("app.fence_2"));
        assertThat(dialect.checkSql("t", 5)).isEqualTo(core.checkSql("t", 5));
    }

    private static String read(String resource) throws IOException {
        try (InputStream in = SchemaScriptsTest.class.getClassLoader().getResourceAsStream(resource)) {
            assertThat(in).as(resource).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}

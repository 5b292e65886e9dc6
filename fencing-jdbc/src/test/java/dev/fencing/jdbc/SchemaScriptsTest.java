package dev.fencing.jdbc;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** The schema scripts shipped in the jar create exactly the table the store creates itself. */
class SchemaScriptsTest {

    @ParameterizedTest
    @EnumSource(FenceDialect.class)
    void scriptMatchesTheDialectsDdl(FenceDialect dialect) throws IOException {
        String script;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(dialect.schemaResource())) {
            assertThat(in).as(dialect.schemaResource()).isNotNull();
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String statement = script.lines().filter(l -> !l.startsWith("--")).reduce("", (a, b) -> a + b + "\n").trim();
        assertThat(normalize(statement)).isEqualTo(normalize(dialect.createTableSql(JdbcFenceStore.DEFAULT_TABLE) + ";"));
    }

    @ParameterizedTest
    @EnumSource(FenceDialect.class)
    void leaseScriptMatchesTheIssuersDdl(FenceDialect dialect) throws IOException {
        String resource = "dev/fencing/jdbc/lease-" + dialect.name().toLowerCase(java.util.Locale.ROOT) + ".sql";
        String script;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(resource)) {
            assertThat(in).as(resource).isNotNull();
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String statement = script.lines().filter(l -> !l.startsWith("--")).reduce("", (a, b) -> a + b + "\n").trim();
        assertThat(normalize(statement))
                .isEqualTo(normalize(LeaseDialect.of(dialect).createTableSql(JdbcTokenIssuer.DEFAULT_TABLE) + ";"));
    }

    private static String normalize(String sql) {
        return sql.replaceAll("\\s+", " ").trim();
    }
}

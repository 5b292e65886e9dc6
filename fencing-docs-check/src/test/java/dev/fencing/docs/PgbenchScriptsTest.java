package dev.fencing.docs;

import dev.fencing.rule.FenceRule;
import dev.fencing.store.sql.FenceSql;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * pgbench's scripts (fencing-benchmarks/pgbench, the ceiling docs/benchmarks.md compares the library with) carry the
 * store's check statement with its parameters written out: each must be the statement {@link FenceSql} builds today,
 * so that a change to the statement cannot leave the ceiling measuring the old one.
 */
class PgbenchScriptsTest {

    /**
     * The parameters as the scripts write them (resource, token, holder, floor key; token, holder and floor key
     * again), and the markers they are.
     */
    private static final Map<String, String> PARAMETERS = new LinkedHashMap<>();

    static {
        PARAMETERS.put("CAST('bench' || chr(58) || 'client-' || CAST(:client_id AS TEXT) AS TEXT)", "CAST(? AS TEXT)");
        PARAMETERS.put("CAST(1 AS BIGINT)", "CAST(? AS BIGINT)");
        PARAMETERS.put("CAST('lease-' || CAST(:client_id AS TEXT) AS TEXT)", "CAST(? AS TEXT)");
        PARAMETERS.put("CAST('bench' || chr(31) AS TEXT)", "CAST(? AS TEXT)");
    }

    private static final String TABLE = "@FENCE@";

    @Test
    void theCheckOfItsOwnRoundTripIsTheStoresStatement() throws IOException {
        assertThat(checkIn("insert-fenced.sql"))
                .isEqualTo(normalized(FenceSql.POSTGRESQL.checkSql(TABLE, FenceRule.UNBOUNDED)));
    }

    @Test
    void theCheckSentWithCommitIsTheStoresStatement() throws IOException {
        String text = FenceSql.POSTGRESQL.checksAtCommitSql(TABLE, "5000ms", FenceRule.UNBOUNDED, 1);
        String[] statements = text.split(";\n");
        assertThat(statements).hasSize(3); // SET LOCAL lock_timeout (left out of the script), the check, COMMIT
        assertThat(statements[0]).startsWith("SET LOCAL lock_timeout");
        assertThat(statements[2]).isEqualTo("COMMIT");
        assertThat(checkIn("insert-fenced-at-commit.sql")).isEqualTo(normalized(statements[1]));
    }

    /**
     * The check statement of a script: from its line starting {@code WITH v} or {@code INSERT INTO @FENCE@} to the
     * line ending in ';', markers put back.
     */
    private static String checkIn(String script) throws IOException {
        Path file = SnippetCheckTest.repositoryRoot().resolve("fencing-benchmarks/pgbench").resolve(script);
        String lines = Files.readAllLines(file).stream().filter(line -> !line.startsWith("--"))
                .collect(Collectors.joining("\n"));
        int start = -1;
        for (String first : List.of("WITH v ", "INSERT INTO " + TABLE)) { // the first line of a check statement
            int at = lines.indexOf("\n" + first);
            if (at >= 0 && (start < 0 || at + 1 < start)) {
                start = at + 1;
            }
        }
        assertThat(start).as("%s has a check statement", script).isNotNegative();
        int end = lines.indexOf(";\n", start);
        String check = lines.substring(start, end);
        for (Map.Entry<String, String> parameter : PARAMETERS.entrySet()) {
            assertThat(check).as("%s writes the parameter %s", script, parameter.getValue())
                    .contains(parameter.getKey());
            check = check.replace(parameter.getKey(), parameter.getValue());
        }
        return normalized(check);
    }

    private static String normalized(String sql) {
        return sql.strip().replaceAll("\\s+", " ").replace("( ", "(").replace(" )", ")");
    }
}

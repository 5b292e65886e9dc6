package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.context.FencingContext;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Several application instances share one database: the instance holding the newer token writes, the zombie in
 * the other is rejected by the database, and only the newer write is in the table.
 */
class TwoInstancesTest {

    private String fenceTable;
    private String dataTable;
    private HikariDataSource admin;
    private JdbcTemplate jdbc;

    private void tables(Database database) {
        admin = database.newPool(2);
        jdbc = new JdbcTemplate(admin);
        fenceTable = Database.uniqueTable("fence");
        dataTable = Database.uniqueTable("data");
        jdbc.execute(JdbcDialect.valueOf(database.name()).createTableSql(fenceTable));
        jdbc.execute(database.createDataTable(dataTable));
    }

    @AfterEach
    void drop() {
        if (jdbc != null) {
            jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
            jdbc.execute("DROP TABLE IF EXISTS " + dataTable);
            admin.close();
        }
    }

    private List<Map<String, Object>> rows() {
        return jdbc.queryForList("SELECT token, v FROM " + dataTable + " ORDER BY id");
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void twoSpringContextsWithTheirOwnPools(Database database) {
        tables(database);
        try (AppInstance zombieApp = new AppInstance(database, fenceTable, dataTable);
             AppInstance newerApp = new AppInstance(database, fenceTable, dataTable)) {
            FencingToken t33 = new FencingToken("notes:42", 33, "instance-a");
            FencingToken t34 = new FencingToken("notes:42", 34, "instance-b");
            FencingContext.run(t33, () -> zombieApp.notes().write("42", "A before its pause")); // t0: A holds 33
            FencingContext.run(t34, () -> newerApp.notes().write("42", "X"));                  // t4: B writes with 34
            assertThatThrownBy(() -> FencingContext.run(t33, () -> zombieApp.notes().write("42", "Y")))  // t6: A wakes
                    .isInstanceOfSatisfying(StaleTokenException.class, e -> {
                        assertThat(e.maxSeen()).isEqualTo(34);
                        assertThat(e.operation()).isEqualTo("NotesRepository.write(String, String)");
                    });
            assertThat(rows()).extracting(r -> r.get("v")).containsExactly("A before its pause", "X");
            assertThat(zombieApp.checks("accepted")).isEqualTo(1);
            assertThat(zombieApp.checks("stale")).isEqualTo(1);
            assertThat(newerApp.checks("accepted")).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void maxSeenSurvivesClosingEverything(Database database) {
        tables(database);
        FencingToken t33 = new FencingToken("notes:7", 33, "old-holder");
        FencingToken t34 = new FencingToken("notes:7", 34, "new-holder");
        try (AppInstance before = new AppInstance(database, fenceTable, dataTable)) {
            FencingContext.run(t34, () -> before.notes().write("7", "X"));
        }
        try (AppInstance after = new AppInstance(database, fenceTable, dataTable)) {
            assertThat(new JdbcFenceAdmin(after.context.getBean(JdbcFenceStore.class)).maxSeen("notes:7")).hasValue(34);
            assertThatThrownBy(() -> FencingContext.run(t33, () -> after.notes().write("7", "Y")))
                    .isInstanceOf(StaleTokenException.class);
            FencingContext.run(t34, () -> after.notes().write("7", "X again")); // the 34 lease carries on
        }
        assertThat(rows()).extracting(r -> r.get("v")).containsExactly("X", "X again");
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void anApplicationWithoutTheFenceTableDoesNotStart(Database database) {
        tables(database);
        String missing = Database.uniqueTable("absent");
        assertThat(startupFailure(() -> new AppInstance(database, missing, dataTable).close()))
                .contains(missing).contains("Create it with the script");
        assertThat(startupFailure(() -> new AppInstance(database, "no_such_schema_x." + missing, dataTable).close()))
                .contains("no_such_schema_x." + missing).contains("missing or unusable");
    }

    private static String startupFailure(Runnable start) {
        Throwable thrown = catchThrowable(start::run);
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (t instanceof dev.fencing.FencingConfigurationException) {
                return t.getMessage();
            }
        }
        throw new AssertionError("expected a FencingConfigurationException at startup", thrown);
    }

    @Test
    void twoJvmProcessesOnPostgresql() throws Exception {
        tables(Database.POSTGRESQL);
        Process zombie = start("33", "process-a", "Y");
        Process newer = start("34", "process-b", "X");
        try {
            BufferedReader zombieOut = reader(zombie);
            BufferedReader newerOut = reader(newer);
            assertThat(zombieOut.readLine()).isEqualTo("READY"); // process A is paused before its write
            assertThat(newerOut.readLine()).isEqualTo("READY");
            release(newer);
            assertThat(newerOut.readLine()).isEqualTo("ACCEPTED");
            assertThat(newer.waitFor(60, TimeUnit.SECONDS)).isTrue();
            release(zombie);                                      // A wakes and writes with 33
            assertThat(zombieOut.readLine()).isEqualTo("REJECTED max_seen=34");
            assertThat(zombie.waitFor(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            zombie.destroyForcibly();
            newer.destroyForcibly();
        }
        assertThat(rows()).extracting(r -> r.get("v")).containsExactly("X");
        assertThat(rows()).extracting(r -> ((Number) r.get("token")).longValue()).containsExactly(34L);
    }

    private Process start(String token, String holder, String value) throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        ProcessBuilder builder = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                WriterProcess.class.getName(), "POSTGRESQL", fenceTable, dataTable, "42", token, holder, value);
        builder.redirectError(ProcessBuilder.Redirect.INHERIT);
        return builder.start();
    }

    private static BufferedReader reader(Process process) {
        return new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    private static void release(Process process) throws Exception {
        Writer in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        in.write("go\n");
        in.flush();
    }
}

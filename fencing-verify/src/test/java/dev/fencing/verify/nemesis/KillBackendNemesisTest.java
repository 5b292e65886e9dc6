package dev.fencing.verify.nemesis;

import dev.fencing.verify.history.NemesisEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** kill-backend on the real PostgreSQL: the hit client's sessions die mid-transaction, the others' live on. */
@Timeout(60)
class KillBackendNemesisTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

    @Test
    void terminatesEverySessionOfTheClientInItsCriticalSectionAndNoOther() throws Exception {
        String prefix = "verify_t" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        String table = prefix + "_set";
        List<NemesisEvent> events = new ArrayList<>();
        AtomicInteger killed = new AtomicInteger();
        try (Connection admin = connect(URL);
             Connection hit1 = connect(PostgresConnectionKiller.withApplicationName(URL, prefix, "client-3"));
             Connection hit2 = connect(PostgresConnectionKiller.withApplicationName(URL, prefix, "client-3"));
             Connection spared = connect(PostgresConnectionKiller.withApplicationName(URL, prefix, "client-4"))) {
            try (Statement s = admin.createStatement()) {
                s.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY, v INT NOT NULL)");
                s.execute("INSERT INTO " + table + " VALUES (1, 0)");
            }
            try {
                assertThat(applicationName(hit1)).isEqualTo(prefix + "_client-3");
                hit1.setAutoCommit(false);
                try (Statement s = hit1.createStatement()) {
                    s.executeUpdate("UPDATE " + table + " SET v = 1 WHERE id = 1");   // a transaction left open
                }

                new KillBackendNemesis(new PostgresConnectionKiller(URL, "postgres", prefix), killed::addAndGet)
                        .strike(new FakeTargets(FakeTargets.client("client-4", false),
                                FakeTargets.client("client-3", true)), new Random(1), events::add);

                assertThat(killed.get()).isEqualTo(2);
                assertThat(events).extracting(NemesisEvent::f, NemesisEvent::nemesis, NemesisEvent::target)
                        .containsExactly(org.assertj.core.groups.Tuple.tuple("start", "kill-backend", "client-3"),
                                org.assertj.core.groups.Tuple.tuple("stop", "kill-backend", "client-3"));
                assertThat(events.get(1).mono()).isGreaterThanOrEqualTo(events.get(0).mono());
                assertThatThrownBy(hit1::commit).isInstanceOf(SQLException.class);
                assertThatThrownBy(() -> applicationName(hit2)).isInstanceOf(SQLException.class);
                assertThat(applicationName(spared)).isEqualTo(prefix + "_client-4");
                try (Statement s = admin.createStatement(); ResultSet rs = s.executeQuery("SELECT v FROM " + table)) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("the killed transaction did not commit").isZero();
                }
            } finally {
                try (Statement s = admin.createStatement()) {
                    s.execute("DROP TABLE IF EXISTS " + table);
                }
            }
        }
    }

    @Test
    void aClientWithNoSessionIsHitForNothingAndABadUrlIsRefused() throws Exception {
        assertThat(new PostgresConnectionKiller(URL, "postgres", "verify_none").kill("client-1")).isZero();
        assertThatThrownBy(() -> new PostgresConnectionKiller("jdbc:mariadb://127.0.0.1/test", "root", "verify_x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a PostgreSQL JDBC URL");
        assertThatThrownBy(() -> PostgresConnectionKiller.applicationName("verify_" + "x".repeat(60), "client-1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("63 characters");
    }

    private static Connection connect(String url) throws SQLException {
        return DriverManager.getConnection(url, "postgres", "");
    }

    private static String applicationName(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW application_name")) {
            rs.next();
            return rs.getString(1);
        }
    }
}

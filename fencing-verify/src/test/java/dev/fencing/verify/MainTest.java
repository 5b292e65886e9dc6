package dev.fencing.verify;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class MainTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return Main.run(new PrintWriter(out), new PrintWriter(err), args);
    }

    @Test
    void helpListsEveryOptionAndExitsZero() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString()).contains("--workload", "--issuer", "--store", "--nemesis", "--clients",
                "--time-limit", "--fence", "--out", "--check", "lock-set (read a set", "counter (read, add 1",
                "append (append one row", "--resources", "Exit codes:", "--postgresql-url", "--mariadb-url",
                "jdbc:mariadb://127.0.0.1:3306/test");
    }

    @Test
    void anUnknownOptionExitsTwoNamingIt() {
        assertThat(run("--workload", "lock-set", "--bogus")).isEqualTo(2);
        assertThat(err.toString()).contains("Unknown option: '--bogus'");
    }

    @Test
    void aBadValueExitsTwoNamingTheOption() {
        assertThat(run("--workload", "lock-sett")).isEqualTo(2);
        assertThat(err.toString()).contains("'--workload': 'lock-sett' (expected one of lock-set, counter, append)");
        assertBad("'--issuer'", "--workload", "counter", "--issuer", "redis");
        assertBad("'--store'", "--workload", "counter", "--store", "h2");
        assertBad("'--nemesis': 'sleep'", "--workload", "counter", "--nemesis", "pause,sleep");
        assertBad("'--fence'", "--workload", "counter", "--fence", "maybe");
        assertBad("'--clients': 0", "--workload", "counter", "--clients", "0");
        assertBad("'--clients'", "--workload", "counter", "--clients", "eight");
        assertBad("'--time-limit': '2 minutes'", "--workload", "counter", "--time-limit", "2 minutes");
        assertBad("'--time-limit': '0s'", "--workload", "counter", "--time-limit", "0s");
        assertBad("'--issuer': 'jdbc-mysql' (expected one of zookeeper, etcd, jdbc-postgresql, jdbc-mariadb)",
                "--workload", "lock-set", "--issuer", "jdbc-mysql");
        assertBad("'--store': 'oracle' (expected one of postgresql, mariadb)", "--workload", "lock-set", "--store",
                "oracle");
        assertBad("'--mariadb-url': not a PostgreSQL or MariaDB JDBC URL", "--workload",
                "lock-set", "--store", "mariadb", "--mariadb-url", "jdbc:mysql://h/db");
        assertBad("'--postgresql-url': 'jdbc:mariadb://127.0.0.1:3306/test' is a mariadb URL, expected postgresql",
                "--workload", "lock-set", "--postgresql-url", "jdbc:mariadb://127.0.0.1:3306/test");
        assertBad("'--resources': 0 (must be 1 to 1000)", "--workload", "append", "--resources", "0");
        assertBad("'--resources': 1001", "--workload", "lock-set", "--resources", "1001");
        assertBad("'--resources'", "--workload", "lock-set", "--resources", "many");
    }

    @Test
    void neitherAWorkloadNorACheckExitsTwo() {
        assertThat(run()).isEqualTo(2);
        assertThat(err.toString()).contains("Missing --workload");
    }

    @Test
    void killBackendOnMariaDbDoesNotRunYet() {
        assertThat(run("--workload", "counter", "--issuer", "zookeeper", "--store", "mariadb", "--nemesis",
                "kill-backend")).isEqualTo(3);
        assertThat(err.toString()).contains("kill-backend is implemented for the postgresql store only");
    }

    @Test
    void checkingAFencedHistoryIsValidAndWritesBothReports(@TempDir Path dir) throws Exception {
        assertThat(run("--check", history("lock-set-fenced.jsonl").toString(), "--out", dir.toString())).isZero();
        assertThat(out.toString()).startsWith("valid: 0 anomalies in 12 events");
        assertThat(Files.readString(dir.resolve("summary.json"))).contains("\"verdict\" : \"valid\"");
        assertThat(Files.readString(dir.resolve("summary.md"))).contains("**Verdict: valid**");
    }

    @Test
    void checkingTheUnfencedHistoryFindsTheLostWriteAndExitsOne(@TempDir Path dir) throws Exception {
        assertThat(run("--check", history("lock-set-unfenced.jsonl").toString(), "--out", dir.toString()))
                .isEqualTo(1);
        assertThat(out.toString()).startsWith("invalid: 1 anomalies");
        assertThat(Files.readString(dir.resolve("summary.md")))
                .contains("- `lost-write` `set`: add 2 by process 2 (op 1) was acknowledged but is missing");
    }

    @Test
    void checkingAnEmptyHistoryIsUnknown(@TempDir Path dir) throws Exception {
        Path empty = Files.writeString(dir.resolve("history.jsonl"), "");
        assertThat(run("--check", empty.toString())).isEqualTo(4);
        assertThat(dir.resolve("summary.json")).exists();       // next to the history by default
    }

    @Test
    void aMissingOrUnreadableHistoryExitsTwo(@TempDir Path dir) throws Exception {
        assertBad("'--check': no such file", "--check", dir.resolve("none.jsonl").toString());
        Path bad = Files.writeString(dir.resolve("bad.jsonl"), "{oops\n{}\n");
        assertBad("history line 1", "--check", bad.toString());
        assertBad("either --check or --workload", "--check", bad.toString(), "--workload", "counter");
    }

    @Test
    @Timeout(30)
    void aHistoryThatIsNotUtf8ExitsTwoNotOne(@TempDir Path dir) throws Exception {
        // exit 1 means "anomalies found": an unreadable file must not say that (nor print a stack trace)
        Path latin1 = Files.write(dir.resolve("latin1.jsonl"),
                "{\"type\":\"commit\",\"seq\":1,\"resource\":\"caf\u00e9\",\"token\":1,\"process\":1,\"op\":0}\n"
                        .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        assertBad("latin1.jsonl: not UTF-8 text", "--check", latin1.toString());
    }

    @Test
    @Timeout(30)
    void aHistoryWithTwoOutcomesForOneOperationExitsTwo(@TempDir Path dir) throws Exception {
        // the add's fail line would have replaced its ok: the lost write hidden, the verdict valid
        Path twice = Files.writeString(dir.resolve("twice.jsonl"), String.join("\n",
                "{\"type\":\"invoke\",\"process\":1,\"index\":0,\"f\":\"add\",\"resource\":\"set\",\"value\":1,"
                        + "\"wall\":1,\"mono\":1}",
                "{\"type\":\"ok\",\"process\":1,\"index\":0,\"f\":\"add\",\"resource\":\"set\",\"value\":1,"
                        + "\"wall\":2,\"mono\":2}",
                "{\"type\":\"fail\",\"process\":1,\"index\":0,\"f\":\"add\",\"resource\":\"set\",\"value\":1,"
                        + "\"wall\":3,\"mono\":3}",
                "{\"type\":\"invoke\",\"process\":0,\"index\":0,\"f\":\"read\",\"resource\":\"set\",\"wall\":4,"
                        + "\"mono\":4}",
                "{\"type\":\"ok\",\"process\":0,\"index\":0,\"f\":\"read\",\"resource\":\"set\",\"value\":[],"
                        + "\"wall\":5,\"mono\":5}", ""));
        assertBad("history line 3: a second completion of process 1 op 0", "--check", twice.toString());
    }

    private void assertBad(String message, String... args) {
        err.getBuffer().setLength(0);
        assertThat(run(args)).as(String.join(" ", args)).isEqualTo(2);
        assertThat(err.toString()).as(String.join(" ", args)).contains(message);
    }

    private static Path history(String name) throws URISyntaxException {
        return Path.of(MainTest.class.getResource("/histories/" + name).toURI());
    }
}

package dev.fencing.verify;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;

/** The command line's --nemesis: the restart-lock-service and kill-backend names, and what it refuses. */
@Timeout(30)
class NemesisOptionsTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return Main.run(new PrintWriter(out), new PrintWriter(err), args);
    }

    @Test
    void helpListsTheNewNemesesWithWhatTheyDo() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString().replaceAll("\\s+", " ")).contains("restart-lock-service (SIGKILL a ZooKeeper or etcd",
                "kill-backend (pg_terminate_backend");
    }

    @Test
    void restartingTheLockServiceOfAJdbcLeaseIsRefusedWithExitTwo() {
        assertThat(run("--workload", "lock-set", "--issuer", "jdbc-postgresql", "--nemesis",
                "pause,restart-lock-service")).isEqualTo(2);
        assertThat(err.toString()).contains("--nemesis restart-lock-service restarts members of a lock service")
                .contains("issuer jdbc-postgresql has none");
    }

    @Test
    void aMisspelledNemesisExitsTwoNamingIt() {
        assertThat(run("--workload", "lock-set", "--issuer", "zookeeper", "--nemesis", "restart-lockservice"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("'--nemesis': 'restart-lockservice'");
        assertThat(run("--workload", "lock-set", "--nemesis", "kill-backends")).isEqualTo(2);
    }

    @Test
    void killBackendOnMariaDbIsNotImplemented() {
        assertThat(run("--workload", "lock-set", "--issuer", "zookeeper", "--store", "mariadb", "--nemesis",
                "kill-backend")).isEqualTo(3);
        assertThat(err.toString()).contains("kill-backend is implemented for the postgresql store only");
    }
}

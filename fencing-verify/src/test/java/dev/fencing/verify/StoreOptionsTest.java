package dev.fencing.verify;

import dev.fencing.verify.run.RunConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The command line's --check-at-commit and the compact nemesis: what they accept, refuse and pass on. */
@Timeout(30)
class StoreOptionsTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return Main.run(new PrintWriter(out), new PrintWriter(err), args);
    }

    @Test
    void helpListsCheckAtCommitAndTheCompactNemesis() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString().replaceAll("\\s+", " ")).contains("--check-at-commit", "COMMIT",
                "compact (fold the fence rows idle for --compact-idle", "--compact-idle");
    }

    @Test
    void checkAtCommitOnMariaDbIsRefusedWithExitTwoNamingTheStore() {
        assertThat(run("--workload", "append", "--issuer", "jdbc-mariadb", "--store", "mariadb",
                "--check-at-commit")).isEqualTo(2);
        assertThat(err.toString()).contains("--check-at-commit runs on --store postgresql only")
                .contains("mariadb");
    }

    @Test
    void checkAtCommitIsRefusedOnMariaDbWhateverTheIssuer() {
        assertThat(run("--workload", "lock-set", "--issuer", "zookeeper", "--store", "mariadb", "--nemesis",
                "pause,compact", "--check-at-commit")).isEqualTo(2);
        assertThat(err.toString()).contains("--check-at-commit runs on --store postgresql only");
    }

    @Test
    void checkAtCommitOnAReadModifyWriteWorkloadSaysLostWritesAreExpected() {
        assertThat(Main.checkAtCommitNote("lock-set", true, true)).contains("lock-set workload's read-modify-write",
                "lost writes are expected");
        assertThat(Main.checkAtCommitNote("counter", true, true)).contains("lost writes are expected");
        assertThat(Main.checkAtCommitNote("append", true, true)).isNull();
        assertThat(Main.checkAtCommitNote("lock-set", false, true)).isNull();
        assertThat(Main.checkAtCommitNote("lock-set", true, false)).isNull();
    }

    @Test
    void aMisspelledCompactExitsTwoNamingIt() {
        assertThat(run("--workload", "lock-set", "--nemesis", "pause,compaction")).isEqualTo(2);
        assertThat(err.toString()).contains("'--nemesis': 'compaction'");
    }

    @Test
    void aBadCompactIdleExitsTwoNamingTheOption() {
        assertThat(run("--workload", "lock-set", "--nemesis", "compact", "--compact-idle", "soon")).isEqualTo(2);
        assertThat(err.toString()).contains("'--compact-idle': 'soon'");
    }

    @Test
    void theRunConfigCarriesCheckAtCommitAndCompactsOnlyWithTheCompactNemesis() {
        RunConfig plain = RunConfig.lockSet(List.of("pause", "kill"), 8, Duration.ofSeconds(30), true);
        assertThat(plain.checkAtCommit()).isFalse();
        assertThat(plain.compacted()).isFalse();
        assertThat(plain.describe()).containsEntry("check", "before the call");
        RunConfig compacting = RunConfig.lockSet(List.of("pause", "compact"), 8, Duration.ofSeconds(30), true)
                .withCheckAtCommit(true).withIssuer("zookeeper").withResources(8);
        assertThat(compacting.compacted()).isTrue();
        assertThat(compacting.checkAtCommit()).isTrue();
        assertThat(compacting.describe()).containsEntry("check", "at commit").containsEntry("nemesis", "pause,compact")
                .containsEntry("compact-idle-ms", 1000L);
        assertThat(compacting.withCompactIdle(Duration.ofMillis(100)).compactIdle()).isEqualTo(Duration.ofMillis(100));
    }
}

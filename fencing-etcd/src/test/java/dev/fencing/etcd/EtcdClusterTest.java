package dev.fencing.etcd;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The test harness installs nothing: without an etcd binary it fails and says what to install. A member that exits
 * during start fails the attempt at once, and the start is tried again on new ports before it fails with the logs.
 */
class EtcdClusterTest {

    @Test
    void aMissingBinaryFailsSayingWhatToInstall() {
        assertThatThrownBy(() -> EtcdCluster.binary("/nonexistent/etcd"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("/nonexistent/etcd")
                .hasMessageContaining("apt-get install etcd-server");
    }

    @Test
    void aMemberThatExitsDuringStartIsTriedAgainThenFailsWithItsLogAndLeavesNothingBehind() throws IOException {
        Path script = Files.createTempFile("not-etcd", ".sh");
        try {
            Files.writeString(script, "#!/bin/sh\necho \"bind: address already in use\"\nexit 3\n");
            script.toFile().setExecutable(true);
            long before = etcdDirectories();
            assertThatThrownBy(() -> new EtcdCluster(1, script.toString()))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("attempt 3 of 3")
                    .hasMessageContaining("exited with 3")
                    .hasMessageContaining("bind: address already in use")
                    .satisfies(e -> assertThat(e.getSuppressed()).hasSize(2));
            assertThat(etcdDirectories()).as("every attempt's directory deleted").isEqualTo(before);
        } finally {
            Files.delete(script);
        }
    }

    private static long etcdDirectories() throws IOException {
        Path target = Paths.get("target").toAbsolutePath();
        if (!Files.isDirectory(target)) {
            return 0;
        }
        try (Stream<Path> files = Files.list(target)) {
            return files.filter(p -> p.getFileName().toString().startsWith("etcd-")).count();
        }
    }
}

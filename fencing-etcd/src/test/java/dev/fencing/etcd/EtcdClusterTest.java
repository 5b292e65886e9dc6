package dev.fencing.etcd;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The test harness installs nothing: without an etcd binary it fails and says what to install. */
class EtcdClusterTest {

    @Test
    void aMissingBinaryFailsSayingWhatToInstall() {
        assertThatThrownBy(() -> EtcdCluster.binary("/nonexistent/etcd"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("/nonexistent/etcd")
                .hasMessageContaining("apt-get install etcd-server");
    }
}

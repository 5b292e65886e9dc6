package dev.fencing.zookeeper;

import org.apache.zookeeper.util.ServiceUtils;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The listener is in force for the whole test JVM: ZooKeeper's exit request is only logged (else this fork dies). */
class ZooKeeperNeverExitsTest {

    @Test
    void anExitRequestFromZooKeeperLeavesTheTestJvmRunning() {
        ServiceUtils.requestSystemExit(2); // what an embedded server's thread does when it ends with an error
        assertThat(System.getProperty("zookeeper.electionPortBindRetry")).isEqualTo("0");
    }
}

package dev.fencing.boot.autoconfigure;

import org.apache.zookeeper.util.ServiceUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * fencing-zookeeper's test jar registers its launcher session listener here too: this module's tests run ZooKeeper
 * servers in their JVM, and a request of ZooKeeper's to exit is only logged (without it this fork dies).
 */
@Timeout(30)
class ZooKeeperNeverExitsInForceTest {

    @Test
    void anExitRequestFromZooKeeperLeavesTheTestJvmRunning() {
        ServiceUtils.requestSystemExit(2);
        assertThat(System.getProperty("zookeeper.electionPortBindRetry")).isEqualTo("0");
    }
}

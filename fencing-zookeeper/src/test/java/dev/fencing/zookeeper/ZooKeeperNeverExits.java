package dev.fencing.zookeeper;

import org.apache.zookeeper.util.ServiceUtils;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * For the whole test JVM, before any test: the ZooKeeper servers the tests run in this JVM never exit it. A member
 * restarted on its old election port gives up after three binds and asks to exit (code 14), and an embedded server
 * whose thread ends with an error asks to exit with code 2 (INVALID_INVOCATION); either killed the whole test fork in
 * CI runs, the second after a test class had put System.exit back while a closed member's thread was still ending.
 * The bind is retried until it succeeds and exit requests are only logged, for the JVM's lifetime: a member that
 * cannot come back fails its test (each has a timeout) instead. Registered in META-INF/services.
 */
public final class ZooKeeperNeverExits implements LauncherSessionListener {

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        System.setProperty("zookeeper.electionPortBindRetry", "0");
        ServiceUtils.setSystemExitProcedure(ServiceUtils.LOG_ONLY);
    }
}

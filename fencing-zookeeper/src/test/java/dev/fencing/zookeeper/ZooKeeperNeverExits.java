package dev.fencing.zookeeper;

import org.apache.zookeeper.util.ServiceUtils;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * For the whole test JVM, before any test: the ZooKeeper servers the tests run in this JVM never exit it. A member
 * restarted on its old election port gives up after three binds and asks to exit (code 14), and an embedded server
 * whose thread ends with an error asks to exit with code 2 (INVALID_INVOCATION); either killed the whole test fork in
 * CI runs. The bind is retried until it succeeds and exit requests are only logged: set when the session opens, and
 * set again as each test or class starts and ends, because every server Curator's {@code TestingServer} starts puts
 * {@code System.exit} back (ZooKeeper's embedded server sets its exit handler, {@code EXIT} by default, JVM-wide); a
 * test class that ran after one found it so, and the fork died. A member that cannot come back fails its test (each
 * has a timeout) instead. Registered in META-INF/services, as both listeners.
 */
public final class ZooKeeperNeverExits implements LauncherSessionListener, TestExecutionListener {

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        System.setProperty("zookeeper.electionPortBindRetry", "0");
        ServiceUtils.setSystemExitProcedure(ServiceUtils.LOG_ONLY);
    }

    @Override
    public void executionStarted(TestIdentifier test) {
        ServiceUtils.setSystemExitProcedure(ServiceUtils.LOG_ONLY);
    }

    @Override
    public void executionFinished(TestIdentifier test, TestExecutionResult result) {
        ServiceUtils.setSystemExitProcedure(ServiceUtils.LOG_ONLY);
    }
}

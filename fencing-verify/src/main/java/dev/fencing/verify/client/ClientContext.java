package dev.fencing.verify.client;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Starts a client's Spring context ({@link ClientConfig}), again when its startup check of the fence or lease table
 * was chosen as a deadlock victim. fencing-jdbc checks a table at startup by writing probe rows (the same resource
 * in every instance) in a transaction it rolls back; on MariaDB, several clients doing that at the same moment on
 * the run's new, empty table can deadlock on InnoDB's insert locks, and one of them fails to start. An orchestrator
 * would restart such an instance; this does it in-process, at most {@value #ATTEMPTS} times, after a random delay.
 */
final class ClientContext {

    static final int ATTEMPTS = 4;

    private ClientContext() {
    }

    /** A refreshed context; the caller closes it. */
    static AnnotationConfigApplicationContext start(ClientSettings settings) throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
            try {
                context.registerBean(ClientSettings.class, () -> settings);
                context.register(ClientConfig.class, WorkloadDriver.configuration(settings.workload()));
                context.refresh();
                return context;
            } catch (RuntimeException e) {
                context.close();
                if (attempt >= ATTEMPTS || !deadlock(e)) {
                    throw e;
                }
                System.err.println("client " + settings.process() + ": startup attempt " + attempt
                        + " was a deadlock victim, starting again: " + e.getMessage());
                Thread.sleep(ThreadLocalRandom.current().nextLong(100, 1_000));
            }
        }
    }

    /** Whether the failure was the database breaking a deadlock (SQLSTATE 40001 or 40P01, or its message). */
    static boolean deadlock(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null
                    && (sql.getSQLState().equals("40001") || sql.getSQLState().equals("40P01"))) {
                return true;
            }
            if (String.valueOf(t.getMessage()).contains("Deadlock found when trying to get lock")) {
                return true;
            }
        }
        return false;
    }
}

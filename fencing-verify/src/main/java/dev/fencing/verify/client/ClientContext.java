package dev.fencing.verify.client;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;


/**
 * Starts a client's Spring context ({@link ClientConfig} and the workload's configuration). Eight clients start at
 * once on a new table; fencing-jdbc's startup check copes with that on its own (a probe resource per instance, a
 * bounded retry on lock conflicts), so a client that fails to start fails the run: the harness does not hide it.
 */
final class ClientContext {

    private ClientContext() {
    }

    /** A refreshed context; the caller closes it. */
    static AnnotationConfigApplicationContext start(ClientSettings settings) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        try {
            context.registerBean(ClientSettings.class, () -> settings);
            context.register(ClientConfig.class, WorkloadDriver.configuration(settings.workload()));
            context.refresh();
            return context;
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
    }
}

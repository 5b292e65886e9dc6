package dev.fencing.sample;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/**
 * Entry point: starts the Spring context on embedded defaults and runs the canonical race. Exits with 0 when the
 * fence blocked the zombie, 1 otherwise.
 */
public final class SampleApplication {

    private SampleApplication() {
    }

    public static void main(String[] args) throws Exception {
        System.out.println("fencing sample: the canonical zombie race against a @Fenced repository");
        System.out.println();
        CanonicalRace.Outcome outcome;
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(SampleConfiguration.class)) {
            outcome = new CanonicalRace(context, System.out).run();
        }
        System.out.println();
        System.out.println(outcome.fenced() ? "OK: the stale holder's write was blocked." : "FAILED: the zombie was not fenced.");
        System.exit(outcome.fenced() ? 0 : 1);
    }
}

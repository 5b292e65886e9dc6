package dev.fencing.sample;

import dev.fencing.context.FencingContext;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * 5. The generic fencing token through the library's annotations: {@code @Fenced(acquire = true)} takes a database
 * lease and its token, the {@code @Fenced} repository's write is checked by the database fence in the write's
 * transaction. Client 1 really pauses (its thread sleeps) past the lease time.
 */
final class FencedJdbcStrategy implements Strategy {

    @Override
    public String name() {
        return "fenced";
    }

    @Override
    public Row run(SampleDatabase db, Options options, Progress progress) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.registerBean(SampleDatabase.class, () -> db);
            context.registerBean(Options.class, () -> options);
            context.registerBean(MeterRegistry.class, () -> registry);
            context.register(SampleConfiguration.class);
            context.refresh();
            AccountService service = context.getBean(AccountService.class);
            AccountRepository repository = context.getBean(AccountRepository.class);
            String resource = "accounts:42";

            CountDownLatch acquired = new CountDownLatch(1);
            long[] tokens = new long[2];
            CompletableFuture<Throwable> client1 = CompletableFuture.supplyAsync(() -> {
                try {
                    service.withLock("42", () -> {
                        tokens[0] = FencingContext.current(resource).value();
                        progress.say(name(), "client 1 acquired token " + tokens[0] + " (@Fenced(acquire = true)); "
                                + "its thread sleeps past the " + options.lease().toMillis() + " ms lease ...");
                        acquired.countDown();
                        sleep(options.lease().toMillis() * 2);
                        repository.write("42", "Y");
                    });
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            });
            if (!acquired.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("client 1 did not acquire");
            }
            service.withLock("42", () -> {
                FencingToken token = FencingContext.current(resource);
                tokens[1] = token.value();
                progress.say(name(), "lease expired; client 2 acquired token " + token.value() + " and writes X");
                repository.write("42", "X");
            });
            Throwable zombie = client1.get(60, TimeUnit.SECONDS);
            boolean blocked = zombie instanceof TokenRejectedException;
            if (zombie instanceof dev.fencing.rule.StaleTokenException lost && lost.lockLost()) {
                progress.say(name(), "client 1 wakes and writes Y with " + tokens[0] + ": REJECTED by its own process, "
                        + "which knows its lease ran out (another process holding that token would be refused by the "
                        + "store, whose max_seen is " + tokens[1] + ")");
            } else if (zombie instanceof TokenRejectedException stale) {
                progress.say(name(), "client 1 wakes and writes Y with " + tokens[0] + ": REJECTED, max_seen is "
                        + stale.maxSeen());
            } else if (zombie != null) {
                throw new IllegalStateException("client 1 failed unexpectedly", zombie);
            } else {
                progress.say(name(), "client 1 wakes and writes Y with " + tokens[0]
                        + ": ACCEPTED (the zombie got through)");
            }
            progress.say(name(), String.format("fencing.checks{resource=accounts}: accepted %.0f, stale %.0f",
                    count(registry, "accepted"), count(registry, "stale")));
            return new Row("Fencing token + JDBC store (" + db.description + ")", true, tokens[0] + ", " + tokens[1],
                    tokens[1] > tokens[0], blocked, repository.read("42"), null);
        }
    }

    private static double count(MeterRegistry registry, String outcome) {
        var counter = registry.find("fencing.checks").tag("resource", "accounts").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

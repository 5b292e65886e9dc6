package dev.fencing.sample;

import dev.fencing.context.FencingContext;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.context.ApplicationContext;

import java.io.PrintStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The race the library exists for, run for real: client 1 acquires a lease and pauses past its expiry, the lock
 * service hands the lock to client 2, client 2 writes, client 1 wakes and writes. Prints each step and returns
 * what the resource ended up holding.
 */
public final class CanonicalRace {

    /** What happened: the data left in the resource and the counters. */
    public record Outcome(String data, long client1Token, long client2Token, double accepted, double stale,
                          boolean zombieRejected) {
        /** The fence did its job: the zombie's write was refused and only client 2's data is there. */
        public boolean fenced() {
            return zombieRejected && "X".equals(data) && accepted == 1 && stale == 1;
        }
    }

    private static final String ACCOUNT = "42";
    private static final String RESOURCE = "accounts:" + ACCOUNT;

    private final ApplicationContext context;
    private final PrintStream out;
    private final long started = System.nanoTime();

    public CanonicalRace(ApplicationContext context, PrintStream out) {
        this.context = context;
        this.out = out;
    }

    public Outcome run() throws Exception {
        AccountService service = context.getBean(AccountService.class);
        AccountRepository repository = context.getBean(AccountRepository.class);
        JdbcFenceStore store = context.getBean(JdbcFenceStore.class);
        store.raiseFloor(RESOURCE, 32);
        say("    ", "resource " + RESOURCE + ": max_seen = " + store.maxSeen(RESOURCE).getAsLong() + " in table "
                + store.table() + " (" + store.dialect() + "), lease time " + SampleConfiguration.LEASE.toMillis() + " ms");

        CountDownLatch client1Acquired = new CountDownLatch(1);
        CountDownLatch client1Wakes = new CountDownLatch(1);
        long[] tokens = new long[2];
        CompletableFuture<Throwable> client1 = CompletableFuture.supplyAsync(() -> {
            try {
                service.withLock(ACCOUNT, () -> {
                    FencingToken token = FencingContext.current(RESOURCE);
                    tokens[0] = token.value();
                    say("t0  ", "Client1 acquire(" + RESOURCE + ") -> token " + token.value());
                    say("t1  ", "Client1 begins a long pause (think GC) ...");
                    client1Acquired.countDown();
                    awaitUninterruptibly(client1Wakes);
                    say("t5  ", "Client1 wakes, unaware that its lease expired");
                    repository.write(ACCOUNT, "Y");
                });
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        if (!client1Acquired.await(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("client 1 did not acquire the lock");
        }

        say("t2  ", "Client2 asks for the lock; it is held, so the lock service waits for lease(" + tokens[0]
                + ") to expire ...");
        service.withLock(ACCOUNT, () -> {
            FencingToken token = FencingContext.current(RESOURCE);
            tokens[1] = token.value();
            say("t3  ", "lease(" + tokens[0] + ") expired; Client2 acquire(" + RESOURCE + ") -> token " + token.value());
            repository.write(ACCOUNT, "X");
            say("t4  ", "Client2 write(" + RESOURCE + ", " + token.value() + ", X)  " + token.value()
                    + " > 32 -> ACCEPT, max_seen = " + token.value());
        });

        client1Wakes.countDown();
        Throwable zombie = client1.get(10, TimeUnit.SECONDS);
        boolean rejected = zombie instanceof StaleTokenException;
        if (zombie instanceof StaleTokenException stale) {
            say("t6  ", "Client1 write(" + RESOURCE + ", " + stale.presented().value() + ", Y)  "
                    + stale.presented().value() + " <= " + stale.maxSeen() + " -> REJECT (" + stale.verdict() + ")");
        } else if (zombie == null) {
            say("t6  ", "Client1 write(" + RESOURCE + ", " + tokens[0] + ", Y) -> ACCEPTED: the zombie got through!");
        } else {
            throw new IllegalStateException("client 1 failed unexpectedly", zombie);
        }

        MeterRegistry meters = context.getBean(MeterRegistry.class);
        Outcome outcome = new Outcome(repository.read(ACCOUNT), tokens[0], tokens[1],
                count(meters, "accepted"), count(meters, "stale"), rejected);
        out.println();
        out.println("max_seen in the database: " + store.maxSeen(RESOURCE).getAsLong());
        out.println("stored data for account " + ACCOUNT + ": " + outcome.data()
                + ("X".equals(outcome.data()) ? "  (client 2's write survived)" : "  (CORRUPTED by the zombie)"));
        out.printf("fencing.checks{resource=accounts, outcome=accepted} = %.0f%n", outcome.accepted());
        out.printf("fencing.checks{resource=accounts, outcome=stale}    = %.0f%n", outcome.stale());
        out.printf("fencing.acquisitions{resource=accounts, outcome=acquired} = %.0f%n",
                meters.get("fencing.acquisitions").tag("outcome", "acquired").counter().count());
        return outcome;
    }

    private static double count(MeterRegistry meters, String outcome) {
        Counter counter = meters.find("fencing.checks").tag("resource", "accounts").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    private void say(String step, String text) {
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        synchronized (out) {
            out.printf("%s[%5d ms] %s%n", step, millis, text);
        }
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

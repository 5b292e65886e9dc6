package dev.fencing.verify.migration;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.FenceStore;
import dev.fencing.token.FencingToken;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A switch from issuer A to issuer B as a rolling deploy runs it: a client on A writes alone, then a client on B
 * starts while the client on A goes on (old and new instances side by side; A's and B's locks do not exclude each
 * other), then A stops and B writes alone. Every write goes through one fence store; each accepted write is recorded
 * inside the fenced call (under the store's per-resource serialization, so the record is in the store's order), each
 * refusal with its kind.
 */
final class Cutover {

    /** A write the store accepted, in the order the store accepted them. */
    record Accepted(String client, String resource, long token) {
    }

    /** A write the store refused. */
    record Refused(String client, String resource, long token, boolean stale) {
    }

    private final FenceStore store;
    private final List<String> resources;
    private final List<Accepted> accepted = Collections.synchronizedList(new ArrayList<>());
    private final List<Refused> refused = Collections.synchronizedList(new ArrayList<>());
    private final AtomicLong writes = new AtomicLong();

    Cutover(FenceStore store, List<String> resources) {
        this.store = store;
        this.resources = List.copyOf(resources);
    }

    /** Client A alone: {@code rounds} writes on every resource. */
    void aloneOn(String client, TokenIssuer issuer, int rounds) throws Exception {
        for (int i = 0; i < rounds; i++) {
            for (String resource : resources) {
                writeOnce(client, issuer, resource);
            }
        }
    }

    /**
     * A on {@code a} and B on {@code b} at once: B makes {@code bRounds} rounds while A keeps writing until B is done
     * (at least {@code aMinRounds} rounds of its own, so that the two overlap).
     */
    void sideBySide(TokenIssuer a, TokenIssuer b, int aMinRounds, int bRounds) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        AtomicBoolean bDone = new AtomicBoolean();
        try {
            Future<?> onA = pool.submit(() -> {
                int round = 0;
                while (round < aMinRounds || !bDone.get()) {
                    for (String resource : resources) {
                        writeOnce("A", a, resource);
                    }
                    round++;
                }
                return null;
            });
            Future<?> onB = pool.submit(() -> {
                try {
                    for (int i = 0; i < bRounds; i++) {
                        for (String resource : resources) {
                            writeOnce("B", b, resource);
                        }
                    }
                } finally {
                    bDone.set(true);
                }
                return null;
            });
            onB.get(90, TimeUnit.SECONDS);
            onA.get(90, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
    }

    private void writeOnce(String client, TokenIssuer issuer, String resource) throws Exception {
        try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(20))) {
            FencingToken token = lease.token();
            try {
                store.fence(resource, token, () -> {
                    accepted.add(new Accepted(client, resource, token.value()));
                    writes.incrementAndGet();
                    return null;
                });
            } catch (TokenRejectedException e) {
                refused.add(new Refused(client, resource, token.value(), e instanceof StaleTokenException));
            } catch (Exception | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
    }

    List<Accepted> accepted() {
        return List.copyOf(accepted);
    }

    List<Refused> refused() {
        return List.copyOf(refused);
    }

    List<Refused> refusedOf(String client) {
        return refused().stream().filter(r -> r.client().equals(client)).toList();
    }

    /**
     * The properties of a safe switch, per resource in the store's order: accepted tokens strictly increase; no write
     * of A is accepted after B's first accepted write; B wrote at all, and none of B's writes was refused.
     */
    void assertSafeSwitch() {
        Map<String, List<Accepted>> byResource = accepted().stream()
                .collect(Collectors.groupingBy(Accepted::resource));
        assertThat(byResource.keySet()).containsExactlyInAnyOrderElementsOf(resources);
        for (Map.Entry<String, List<Accepted>> entry : byResource.entrySet()) {
            List<Accepted> order = entry.getValue();
            for (int i = 1; i < order.size(); i++) {
                assertThat(order.get(i).token()).as("accepted tokens of %s strictly increase: %s", entry.getKey(),
                        order).isGreaterThan(order.get(i - 1).token());
            }
            int firstB = -1;
            for (int i = 0; i < order.size(); i++) {
                if (order.get(i).client().equals("B")) {
                    firstB = i;
                    break;
                }
            }
            assertThat(firstB).as("B wrote on %s", entry.getKey()).isGreaterThanOrEqualTo(0);
            assertThat(order.subList(firstB, order.size())).as("no write of A accepted on %s after B's first",
                    entry.getKey()).allMatch(a -> a.client().equals("B"));
        }
        assertThat(refusedOf("B")).as("B's writes are never refused").isEmpty();
    }
}

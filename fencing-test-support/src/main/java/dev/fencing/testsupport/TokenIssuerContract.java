package dev.fencing.testsupport;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.IssuerMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The behaviour every {@link TokenIssuer} must have, written once: strictly increasing tokens under concurrency,
 * independent resources, release and re-acquire, timeouts that return or throw in time, every resource up to
 * {@link FencingToken#MAX_PART_LENGTH} chars, no lock left held by a failed acquire, a larger token after a
 * takeover and a quiet release of a lost lease. Extend it in a test class, with {@code fencing-test-support} as a
 * test dependency; an issuer that talks to a lock service over the network extends
 * {@link RemoteTokenIssuerContract} instead.
 *
 * <p>An implementation provides three methods: {@link #issuer()}, the issuer under test on a running lock service;
 * {@link #afterNextGrant(String, Runnable)}, a way to inject a failure between the grant of a lock and the return of
 * its lease (for example a package-private test hook in the issuer, set with {@link #once(String, Runnable)});
 * and
 * {@link #expire(Lease)}, which makes the lock service end a lease as if its holder had stopped renewing it. It may
 * override {@link #otherIssuer()} (a second session, for issuers that have one), {@link #registry()} (to have the
 * counters checked) and {@link #slack()}.
 */
public abstract class TokenIssuerContract {

    /** The issuer under test; may return the same instance every time. */
    protected abstract TokenIssuer issuer();

    /**
     * Makes the issuer run {@code action} once, in the next acquire of {@code resource}, right after the lock service
     * granted the lock and before the lease is returned: the place where a failure used to leave the lock held.
     * Implement it through the issuer's package-private test hook, e.g. with {@link #once(String, Runnable)}.
     */
    protected abstract void afterNextGrant(String resource, Runnable action);

    /**
     * Makes the lock service end {@code lease} the way it ends the lease of a holder that stopped renewing it (its
     * session expires, its lease time runs out), so that another acquirer can take the lock over. Other leases held
     * through the issuer at that moment may end too.
     */
    protected abstract void expire(Lease lease) throws Exception;

    /**
     * An issuer of the same kind on the same lock service but its own instance, connection and session, as another
     * process (or this one after a restart) would have: it sees a lock left held by {@link #issuer()} (an issuer may
     * re-enter its own session's lock, and so hide a leak from itself), and its tokens continue the same sequence
     * ({@link #tokensIncreaseAcrossIssuersOfTheSameService()}: an issuer that counts in its instance, or starts again
     * after a restart, fails there). Defaults to {@link #issuer()}, which checks neither: override it with a second
     * instance whenever the issuer has state or a session of its own.
     */
    protected TokenIssuer otherIssuer() {
        return issuer();
    }

    /** The registry the issuer counts in, or {@code null} when it counts nothing. */
    protected MeterRegistry registry() {
        return null;
    }

    /** A hook for {@link #afterNextGrant}: runs {@code action} the first time it is called with {@code resource}. */
    protected static Consumer<String> once(String resource, Runnable action) {
        AtomicBoolean done = new AtomicBoolean();
        return r -> {
            if (r.equals(resource) && done.compareAndSet(false, true)) {
                action.run();
            }
        };
    }

    /** A resource name no other test uses. */
    protected String freshResource() {
        return "issuer-contract-" + UUID.randomUUID();
    }

    /** How long an acquire may overrun its timeout (scheduling, one round trip). */
    protected Duration slack() {
        return Duration.ofSeconds(3);
    }

    @Test
    void tokenNamesItsResourceAndIsPositive() {
        String r = freshResource();
        Lease lease = issuer().acquire(r, Duration.ofSeconds(10));
        try {
            assertThat(lease.token().resource()).isEqualTo(r);
            assertThat(lease.token().value()).isPositive();
            assertThat(lease.isLost()).isFalse();
            assertThat(lease.isReleased()).isFalse();
            assertThat(lease.isHeld()).isTrue();
        } finally {
            lease.close();
        }
    }

    @Test
    void strictlyIncreasingTokensForConcurrentAcquirers() throws Exception {
        String r = freshResource();
        int threads = 4;
        int each = 8;
        List<Long> inLockOrder = new ArrayList<>(); // appended while holding the lock: the list is in lock order
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            futures.add(pool.submit(() -> {
                start.await();
                for (int i = 0; i < each; i++) {
                    Lease lease = issuer().acquire(r, Duration.ofSeconds(30));
                    try {
                        synchronized (inLockOrder) {
                            inLockOrder.add(lease.token().value());
                        }
                    } finally {
                        lease.close();
                    }
                }
                return null;
            }));
        }
        start.countDown();
        try {
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(inLockOrder).hasSize(threads * each).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void aHeldLockExcludesOthersUntilReleased() throws Exception {
        String r = freshResource();
        Lease first = issuer().acquire(r, Duration.ofSeconds(10));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Lease> second = pool.submit(() -> issuer().acquire(r, Duration.ofSeconds(30)));
            Thread.sleep(300);
            assertThat(second).isNotDone();
            first.close();
            Lease next = second.get(30, TimeUnit.SECONDS);
            assertThat(next.token().value()).isGreaterThan(first.token().value());
            assertThat(next.token().holder()).isNotEqualTo(first.token().holder());
            pool.submit(() -> next.close()).get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Tokens for one resource keep increasing whichever instance on the lock service issues them ({@link #issuer()},
     * {@link #otherIssuer()}: two processes, or one before and after a restart): the sequence lives in the lock
     * service, not in an instance.
     */
    @Test
    @Timeout(60)
    void tokensIncreaseAcrossIssuersOfTheSameService() {
        String r = freshResource();
        long last = 0;
        for (int i = 0; i < 6; i++) {
            TokenIssuer acquirer = i % 2 == 0 ? issuer() : otherIssuer();
            try (Lease lease = acquirer.acquire(r, Duration.ofSeconds(10))) {
                assertThat(lease.token().value()).as("token %d of %s after %d", i, acquirer, last)
                        .isGreaterThan(last);
                last = lease.token().value();
            }
        }
    }

    @Test
    void resourcesAreIndependent() {
        String a = freshResource();
        String b = freshResource();
        Lease onA = issuer().acquire(a, Duration.ofSeconds(10));
        try {
            Lease onB = issuer().acquire(b, Duration.ofSeconds(2));
            assertThat(onB.token().resource()).isEqualTo(b);
            onB.close();
        } finally {
            onA.close();
        }
    }

    @Test
    @Timeout(60)
    void aResourceIsIndependentOfTheResourcesItsNamePrefixes() throws Exception {
        String parent = freshResource();
        for (String child : List.of(parent + "/x", parent + "/", parent + ":x", parent + "%2Fx")) {
            Lease onChild = otherIssuer().acquire(child, Duration.ofSeconds(10)); // held first, by another process
            try {
                Lease onParent = issuer().acquire(parent, Duration.ofSeconds(2));
                onParent.close();
            } finally {
                onChild.close();
            }
        }
    }

    @Test
    void releaseAndReacquireGivesALargerToken() {
        String r = freshResource();
        Lease first = issuer().acquire(r, Duration.ofSeconds(10));
        FencingToken firstToken = first.token();
        first.close();
        assertThat(first.isReleased()).isTrue();
        assertThat(first.isHeld()).isFalse();
        assertThat(first.isLost()).as("a normal release is no loss").isFalse();
        first.close();                       // releasing twice does nothing
        assertThat(first.isLost()).isFalse();
        Lease second = issuer().acquire(r, Duration.ofSeconds(10));
        try {
            assertThat(second.token().value()).isGreaterThan(firstToken.value());
        } finally {
            second.close();
        }
    }

    @Test
    void acquireOnAHeldLockThrowsWithinItsTimeout() throws Exception {
        String r = freshResource();
        Lease held = issuer().acquire(r, Duration.ofSeconds(10));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Duration timeout = Duration.ofMillis(500);
            long started = System.nanoTime();
            Future<Throwable> attempt = pool.submit(() -> {
                try {
                    issuer().acquire(r, timeout).close();
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            });
            Throwable failure = attempt.get(timeout.plus(slack()).toMillis() + 5_000, TimeUnit.MILLISECONDS);
            long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertThat(failure).isInstanceOf(LockAcquisitionException.class).hasMessageContaining(r);
            assertThat(((LockAcquisitionException) failure).resource()).isEqualTo(r);
            assertThat(elapsed).isGreaterThanOrEqualTo(timeout.toMillis() - 50)
                    .isLessThanOrEqualTo(timeout.plus(slack()).toMillis());
        } finally {
            pool.shutdownNow();
            held.close();
        }
    }

    /**
     * A caller that gives up on a wait (a reactive subscriber that cancelled, an executor shut down) interrupts the
     * waiting thread: the acquire ends with the interrupt kept, and is counted {@code cancelled}, not {@code failed},
     * since the lock service did not fail.
     */
    @Test
    @Timeout(60)
    void anAcquireInterruptedWhileWaitingIsCountedCancelledAndKeepsTheInterrupt() throws Exception {
        String r = freshResource();
        Lease held = issuer().acquire(r, Duration.ofSeconds(10));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            double failedBefore = count(IssuerMetrics.ACQUISITIONS, "failed");
            double cancelledBefore = count(IssuerMetrics.ACQUISITIONS, "cancelled");
            Duration timeout = Duration.ofSeconds(3);
            CountDownLatch started = new CountDownLatch(1);
            java.util.concurrent.atomic.AtomicReference<Thread> waiter =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Future<Object[]> attempt = pool.submit(() -> {
                waiter.set(Thread.currentThread());
                started.countDown();
                Throwable failure = catchThrowable(() -> issuer().acquire(r, timeout).close());
                return new Object[] {failure, Thread.interrupted()};
            });
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            Thread.sleep(300); // most likely waiting by now; an interrupt before the wait must end it the same way
            waiter.get().interrupt();
            Object[] outcome = attempt.get(timeout.plus(slack()).toMillis() + 5_000, TimeUnit.MILLISECONDS);
            assertThat((Throwable) outcome[0]).isInstanceOf(LockAcquisitionException.class);
            assertThat((Boolean) outcome[1]).as("the interrupt is kept for the caller").isTrue();
            if (registry() != null) {
                assertThat(count(IssuerMetrics.ACQUISITIONS, "cancelled")).isEqualTo(cancelledBefore + 1);
                assertThat(count(IssuerMetrics.ACQUISITIONS, "failed")).as("no failure of the lock service")
                        .isEqualTo(failedBefore);
            }
        } finally {
            pool.shutdownNow();
            held.close();
        }
        assertFreeAtOnce(r); // the interrupted request, should the lock service still grant it, gave the lock back
    }

    @Test
    void badArgumentsAreRefusedWithTheirName() {
        assertThatThrownBy(() -> issuer().acquire(" ", Duration.ofSeconds(1))).hasMessageContaining("resource");
        assertThatThrownBy(() -> issuer().acquire(freshResource(), Duration.ofSeconds(-1)))
                .hasMessageContaining("timeout");
    }

    @Test
    @Timeout(120)
    void resourcesOfTheMaximumLengthCanBeLockedInAnyScript() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String unique = freshResource();
        StringBuilder cjk = new StringBuilder();        // 256 BMP CJK ideographs, random so the test never repeats one
        while (cjk.length() < FencingToken.MAX_PART_LENGTH) {
            cjk.append((char) random.nextInt(0x4E00, 0x9FA0));
        }
        StringBuilder pairs = new StringBuilder();      // 128 supplementary CJK ideographs: 256 UTF-16 units
        while (pairs.length() < FencingToken.MAX_PART_LENGTH) {
            pairs.appendCodePoint(random.nextInt(0x20000, 0x2A6D0));
        }
        List<String> resources = List.of(
                (unique + "-" + "a".repeat(FencingToken.MAX_PART_LENGTH)).substring(0, FencingToken.MAX_PART_LENGTH),
                cjk.toString(), pairs.toString());
        for (String r : resources) {
            assertThat(r).hasSize(FencingToken.MAX_PART_LENGTH);
            Lease first = issuer().acquire(r, Duration.ofSeconds(10));
            long firstValue;
            try {
                assertThat(first.token().resource()).isEqualTo(r);
                assertThat(first.token().holder().length()).isLessThanOrEqualTo(FencingToken.MAX_PART_LENGTH);
                assertThat(FencingToken.parse(first.token().toText())).isEqualTo(first.token());
                firstValue = first.token().value();
            } finally {
                first.close();
            }
            Lease second = issuer().acquire(r, Duration.ofSeconds(10));
            try {
                assertThat(second.token().value()).isGreaterThan(firstValue);
                assertThat(second.token().holder()).isNotEqualTo(first.token().holder());
            } finally {
                second.close();
            }
        }
    }

    @Test
    void aResourceLongerThanATokenAllowsIsRefusedBeforeLocking() {
        String tooLong = freshResource() + "x".repeat(FencingToken.MAX_PART_LENGTH);
        assertThatThrownBy(() -> issuer().acquire(tooLong, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("resource").hasMessageContaining(String.valueOf(FencingToken.MAX_PART_LENGTH));
        String pairTooMany = "\uD840\uDC00".repeat(FencingToken.MAX_PART_LENGTH / 2) + "x"; // 257 UTF-16 units
        assertThatThrownBy(() -> issuer().acquire(pairTooMany, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @Timeout(60)
    void aFailureAfterTheGrantReleasesTheLock() {
        String r = freshResource();
        RuntimeException injected = new IllegalStateException("injected after the grant");
        afterNextGrant(r, () -> {
            throw injected;
        });
        double failedBefore = count(IssuerMetrics.ACQUISITIONS, "failed", "IllegalStateException");
        Throwable failure = catchThrowable(() -> issuer().acquire(r, Duration.ofSeconds(10)));
        assertThat(failure).isInstanceOf(LockAcquisitionException.class).hasMessageContaining(r);
        assertThat(causes(failure)).contains(injected);
        if (registry() != null) {
            assertThat(count(IssuerMetrics.ACQUISITIONS, "failed", "IllegalStateException"))
                    .as("the failure is counted with the exception it wraps").isEqualTo(failedBefore + 1);
        }
        assertFreeAtOnce(r);
    }

    @Test
    @Timeout(60)
    void aFailureAfterTheGrantOnAnInterruptedThreadReleasesTheLockAndKeepsTheInterrupt() {
        String r = freshResource();
        RuntimeException injected = new IllegalStateException("interrupted after the grant");
        afterNextGrant(r, () -> {
            Thread.currentThread().interrupt();
            throw injected;
        });
        Throwable failure = catchThrowable(() -> issuer().acquire(r, Duration.ofSeconds(10)));
        boolean interrupted = Thread.interrupted(); // read and clear before anything else waits
        assertThat(interrupted).as("the interrupt is kept for the caller").isTrue();
        assertThat(failure).isInstanceOf(LockAcquisitionException.class);
        assertThat(causes(failure)).contains(injected);
        assertFreeAtOnce(r);
    }

    @Test
    @Timeout(120)
    void aLostLeaseIsTakenOverWithALargerTokenAndItsReleaseIsQuiet() throws Exception {
        String r = freshResource();
        Lease zombie = issuer().acquire(r, Duration.ofSeconds(10));
        double lostBefore = count(IssuerMetrics.LOST, null);
        double failedBefore = count(IssuerMetrics.ACQUISITIONS, "failed");

        expire(zombie);
        Await.until(zombie::isLost);
        assertThat(zombie.isHeld()).isFalse();
        assertThat(zombie.isReleased()).isFalse();
        Lease next = issuer().acquire(r, Duration.ofSeconds(30)); // the lock service took the zombie's lock back
        try {
            assertThat(next.token().value()).isGreaterThan(zombie.token().value());
            assertThat(next.token().holder()).isNotEqualTo(zombie.token().holder());
            assertThat(next.isLost()).isFalse();

            assertThatCode(zombie::close).doesNotThrowAnyException();
            assertThatCode(zombie::close).doesNotThrowAnyException();
            assertThat(zombie.isLost()).isTrue();
            assertThat(zombie.isReleased()).isTrue();
            assertThat(next.isLost()).as("the zombie's release leaves the new holder's lock alone").isFalse();
            if (registry() != null) {
                // the loss is counted once: when the service reported it, or at the release for an issuer that
                // learns of it only then; the release itself is no failure. A loss the service reported is flagged
                // first and counted right after, on the service client's thread: wait for the count
                Await.until(() -> count(IssuerMetrics.LOST, null) >= lostBefore + 1);
                assertThat(count(IssuerMetrics.LOST, null)).isEqualTo(lostBefore + 1);
                assertThat(count(IssuerMetrics.ACQUISITIONS, "failed")).isEqualTo(failedBefore);
            }
            // asked by another process: an issuer whose acquisitions could re-enter each other's locks on one
            // thread would grant this thread, the new holder's, the lock again
            assertThatThrownBy(() -> otherIssuer().acquire(r, Duration.ofMillis(300)))
                    .as("the new holder still holds the lock").isInstanceOf(LockAcquisitionException.class);
        } finally {
            next.close();
        }
    }

    @Test
    @Timeout(60)
    void releaseOnAnInterruptedThreadFreesTheLockAndKeepsTheInterrupt() {
        String r = freshResource();
        Lease lease = issuer().acquire(r, Duration.ofSeconds(10));
        Thread.currentThread().interrupt(); // a cancelled task releasing in its finally block
        boolean interrupted;
        try {
            lease.close();
        } finally {
            interrupted = Thread.interrupted();
        }
        assertThat(interrupted).as("the interrupt is kept for the caller").isTrue();
        assertFreeAtOnce(r);
    }

    /**
     * The lock on {@code r} is free: another process acquires it well within a short timeout (a leaked lock would
     * make it time out), and so does this issuer afterwards.
     */
    private void assertFreeAtOnce(String r) {
        for (TokenIssuer acquirer : List.of(otherIssuer(), issuer())) {
            Lease next = acquirer.acquire(r, Duration.ofSeconds(2));
            try {
                assertThat(next.token().resource()).isEqualTo(r);
                assertThat(next.isLost()).isFalse();
            } finally {
                next.close();
            }
        }
    }

    private static List<Throwable> causes(Throwable failure) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable t = failure; t != null && !chain.contains(t); t = t.getCause()) {
            chain.add(t);
        }
        return chain;
    }

    private double count(String name, String outcome) {
        return count(name, outcome, null);
    }

    private double count(String name, String outcome, String exception) {
        MeterRegistry registry = registry();
        if (registry == null) {
            return 0;
        }
        var search = registry.find(name);
        if (outcome != null) {
            search = search.tag("outcome", outcome);
        }
        if (exception != null) {
            search = search.tag("exception", exception);
        }
        return search.counters().stream().mapToDouble(Counter::count).sum();
    }
}

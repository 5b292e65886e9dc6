package dev.fencing.integration;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The {@link java.util.concurrent.locks.Lock} semantics of {@link FencedLock} and its token binding, in one JVM. */
@Timeout(20)
class FencedLockTest {

    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
    private final FencedLockRegistry registry = new FencedLockRegistry(issuer, "orders:");
    /** A second process's registry on the same lock service. */
    private final FencedLockRegistry other = new FencedLockRegistry(issuer, "orders:");
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stopPool() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
        assertThat(FencingContext.isEmpty()).as("nothing left bound on the test thread").isTrue();
    }

    @Test
    void lockBindsTheTokenAndUnlockUnbindsAndReleases() {
        FencedLock lock = registry.obtain("42");
        assertThat(FencingContext.current("orders:42")).isNull();

        lock.lock();
        FencingToken token = lock.token();
        assertThat(token.resource()).isEqualTo("orders:42");
        assertThat(FencingContext.currentLocal("orders:42")).isEqualTo(token);
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(issuer.isHeld("orders:42")).isTrue();

        lock.unlock();
        assertThat(FencingContext.current("orders:42")).isNull();
        assertThat(issuer.isHeld("orders:42")).as("lease released").isFalse();
        assertThat(lock.isHeldByCurrentThread()).isFalse();

        FencedLock elsewhere = other.obtain("42");
        assertThat(elsewhere.tryLock()).isTrue();
        assertThat(elsewhere.token().value()).isGreaterThan(token.value());
        elsewhere.unlock();
    }

    @Test
    void reentrantAcquisitionsShareOneLeaseAndToken() throws InterruptedException {
        FencedLock lock = registry.obtain("r");
        lock.lock();
        FencingToken token = lock.token();
        assertThat(lock.tryLock()).isTrue();
        assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
        lock.lockInterruptibly();
        assertThat(lock.token()).isEqualTo(token);
        assertThat(issuer.highestIssued("orders:r")).as("one lease for four acquisitions").isEqualTo(token.value());

        lock.unlock();
        lock.unlock();
        lock.unlock();
        assertThat(FencingContext.currentLocal("orders:r")).as("still held once").isEqualTo(token);
        lock.unlock();
        assertThat(FencingContext.current("orders:r")).isNull();
        assertThat(issuer.isHeld("orders:r")).isFalse();
    }

    @Test
    void onlyTheHolderMayUnlockOrReadTheToken() throws Exception {
        FencedLock lock = registry.obtain("owner");
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("orders:owner").hasMessageContaining("does not hold it");
        assertThatThrownBy(lock::token).isInstanceOf(IllegalMonitorStateException.class);

        lock.lock();
        try {
            Future<?> stranger = pool.submit(() -> {
                assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class)
                        .hasMessageContaining("orders:owner");
                assertThatThrownBy(lock::token).isInstanceOf(IllegalMonitorStateException.class);
                assertThat(FencingContext.current("orders:owner")).as("the binding is the holder's only").isNull();
            });
            stranger.get(5, TimeUnit.SECONDS);
            assertThat(lock.isHeldByCurrentThread()).isTrue();
        } finally {
            lock.unlock();
        }
    }

    @Test
    void conditionsAreNotSupported() {
        assertThatThrownBy(() -> registry.obtain("c").newCondition())
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("orders:c");
    }

    /**
     * Holds {@code key} of {@link #other} on a thread of its own (another process's holder) until closed: this thread
     * holding it through another registry would be refused as a wait for itself.
     */
    private AutoCloseable heldElsewhere(String key) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch locked = new CountDownLatch(1);
        Future<?> holder = pool.submit(() -> {
            FencedLock held = other.obtain(key);
            held.lock();
            try {
                locked.countDown();
                release.await();
            } finally {
                held.unlock();
            }
            return null;
        });
        assertThat(locked.await(5, TimeUnit.SECONDS)).isTrue();
        return () -> {
            release.countDown();
            holder.get(5, TimeUnit.SECONDS);
        };
    }

    @Test
    void tryLockDoesNotWaitForAnotherHolder() throws Exception {
        try (AutoCloseable held = heldElsewhere("busy")) {
            FencedLock lock = registry.obtain("busy");
            long start = System.nanoTime();
            assertThat(lock.tryLock()).isFalse();
            assertThat(lock.tryLock(0, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("no wait for the 30 s lease")
                    .isLessThan(Duration.ofSeconds(2));

            start = System.nanoTime();
            assertThat(lock.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .isGreaterThanOrEqualTo(Duration.ofMillis(250)).isLessThan(Duration.ofSeconds(3));
            assertThat(FencingContext.current("orders:busy")).as("nothing bound here").isNull();
            assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        }
    }

    @Test
    void oneThreadTakingAResourceThroughTwoRegistriesIsRefusedInsteadOfWaitingForItself() {
        FencedLock mine = registry.obtain("twice");
        mine.lock();
        try {
            assertThatThrownBy(() -> other.obtain("twice").lock()).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("orders:twice").hasMessageContaining("another FencedLockRegistry's lock");
            assertThat(FencingContext.currentLocal("orders:twice")).isEqualTo(mine.token());
        } finally {
            mine.unlock();
        }
        assertThat(issuer.isHeld("orders:twice")).isFalse();
    }

    @Test
    void threadsOfOneRegistryTakeTurnsWithGrowingTokens() throws Exception {
        FencedLock lock = registry.obtain(7L);
        lock.lock();
        FencingToken first = lock.token();
        CountDownLatch waiting = new CountDownLatch(1);
        Future<FencingToken> second = pool.submit(() -> {
            waiting.countDown();
            lock.lock();
            try {
                return FencingContext.currentLocal("orders:7");
            } finally {
                lock.unlock();
            }
        });
        waiting.await();
        assertThatThrownBy(() -> second.get(300, TimeUnit.MILLISECONDS))
                .isInstanceOf(java.util.concurrent.TimeoutException.class);
        lock.unlock();
        assertThat(second.get(5, TimeUnit.SECONDS).value()).isGreaterThan(first.value());
    }

    @Test
    void interruptsStopTheInterruptibleWaitsAndNotLock() throws Exception {
        try (AutoCloseable held = heldElsewhere("int")) {
            FencedLock lock = registry.obtain("int");
            AtomicReference<Thread> waiter = new AtomicReference<>();
            CountDownLatch started = new CountDownLatch(1);
            Future<Throwable> interruptible = pool.submit(() -> {
                waiter.set(Thread.currentThread());
                started.countDown();
                try {
                    lock.lockInterruptibly();
                    return null;
                } catch (InterruptedException e) {
                    assertThat(lock.isHeldByCurrentThread()).isFalse();
                    assertThat(FencingContext.isEmpty()).isTrue();
                    return e;
                }
            });
            started.await();
            Thread.sleep(100); // let it reach the issuer's wait; the assertion below does not depend on it
            waiter.get().interrupt();
            assertThat(interruptible.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class)
                    .hasMessageContaining("orders:int");

            Thread.currentThread().interrupt();
            assertThatThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
            assertThat(Thread.interrupted()).as("status cleared by the InterruptedException").isFalse();

            Thread.currentThread().interrupt();
            assertThat(lock.tryLock()).as("tryLock() ignores the interrupt").isFalse();
            assertThat(Thread.interrupted()).as("and keeps it").isTrue();
        }
    }

    @Test
    void lockKeepsWaitingThroughAnInterruptAndKeepsIt() throws Exception {
        FencedLock held = other.obtain("unint");
        held.lock();
        FencedLock lock = registry.obtain("unint");
        AtomicReference<Thread> waiter = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        Future<Boolean> blocked = pool.submit(() -> {
            waiter.set(Thread.currentThread());
            started.countDown();
            lock.lock();
            try {
                return Thread.currentThread().isInterrupted() && lock.isHeldByCurrentThread();
            } finally {
                lock.unlock();
            }
        });
        started.await();
        waiter.get().interrupt();
        assertThatThrownBy(() -> blocked.get(300, TimeUnit.MILLISECONDS))
                .isInstanceOf(java.util.concurrent.TimeoutException.class);
        held.unlock();
        assertThat(blocked.get(5, TimeUnit.SECONDS)).as("locked after the holder left, interrupt kept").isTrue();
    }

    @Test
    void aLostLeaseIsReportedAtTheNextReentrantAcquireAndTheHoldIsDropped() throws Exception {
        // long enough for a stalled VM to reenter inside it
        InMemoryTokenIssuer shortLeases = new InMemoryTokenIssuer(Duration.ofMillis(1_000), 0);
        FencedLockRegistry mine = new FencedLockRegistry(shortLeases);
        FencedLockRegistry theirs = new FencedLockRegistry(shortLeases);
        FencedLock lock = mine.obtain("leader");
        lock.lock();
        FencingToken old = lock.token();
        assertThat(lock.tryLock()).as("held: reentry counts").isTrue();
        lock.unlock();

        FencedLock successor = theirs.obtain("leader");
        FencingToken newer = CompletableFuture.supplyAsync(() -> {
            successor.lock(); // waits until the 1 s lease has expired, then takes it over
            try {
                return successor.token();
            } finally {
                successor.unlock();
            }
        }, pool).get(5, TimeUnit.SECONDS);
        assertThat(newer.value()).isGreaterThan(old.value());
        assertThat(FencingContext.currentLocal("leader")).as("the zombie still has its old token bound").isEqualTo(old);

        assertThat(lock.tryLock(1, TimeUnit.SECONDS)).as("lost: reported").isFalse();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(FencingContext.current("leader")).as("old token unbound").isNull();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);

        assertThat(lock.tryLock()).as("a fresh acquisition").isTrue();
        assertThat(lock.token().value()).isGreaterThan(newer.value());
        lock.unlock();

        lock.lock();
        Thread.sleep(1_200); // past the 1 s lease: nothing here can observe expiry sooner
        assertThatThrownBy(lock::lock).isInstanceOf(LockAcquisitionException.class)
                .hasMessageContaining("'leader'").hasMessageContaining("was lost");
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    /**
     * The usual nesting, {@code lock(); try { ... } finally { unlock(); }}, around a nested acquisition that finds the
     * lease lost: the outer {@code unlock()} in its {@code finally} block replaces the nested LockAcquisitionException.
     * It said only "does not hold it", so the loss that caused it was nowhere; it now says why.
     */
    @Test
    void theOuterUnlockAfterANestedAcquisitionFoundTheLeaseLostSaysWhy() throws Exception {
        InMemoryTokenIssuer shortLeases = new InMemoryTokenIssuer(Duration.ofMillis(200), 0);
        FencedLock lock = new FencedLockRegistry(shortLeases).obtain("job");
        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> {
            lock.lock();
            try {
                lock.lock();
                try {
                    Thread.sleep(400); // past the lease
                    lock.lock(); // nested once more: finds the lease lost, drops the two holds
                } finally {
                    lock.unlock();
                }
            } finally {
                lock.unlock();
            }
        });
        assertThat(thrown).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("'job'").hasMessageContaining("lease was lost");
        assertThat(FencingContext.isEmpty()).isTrue();
        assertThatThrownBy(lock::unlock).as("the dropped holds are all accounted for")
                .isInstanceOf(IllegalMonitorStateException.class).hasMessageNotContaining("lease was lost");
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    @Test
    void unlockingOutOfOrderUnbindsTheInnerTokenAndSaysSo() {
        FencedLock outer = registry.obtain("outer");
        FencedLock inner = registry.obtain("inner");
        outer.lock();
        inner.lock();
        assertThatThrownBy(outer::unlock).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("orders:outer").hasMessageContaining("reverse order");
        assertThat(issuer.isHeld("orders:outer")).as("released anyway").isFalse();
        assertThat(FencingContext.current("orders:inner")).as("fails closed: no token").isNull();
        assertThat(inner.isHeldByCurrentThread()).isTrue();
        inner.unlock();
        assertThat(issuer.isHeld("orders:inner")).isFalse();
    }

    @Test
    void anOuterBindingOfTheSameResourceComesBackAfterUnlock() {
        FencingToken bound = new FencingToken("orders:x", 1, "somebody");
        try (FencingScope scope = FencingContext.bind(bound)) {
            FencedLock lock = registry.obtain("x");
            lock.lock();
            assertThat(FencingContext.current("orders:x")).isEqualTo(lock.token());
            lock.unlock();
            assertThat(FencingContext.current("orders:x")).isEqualTo(bound);
        }
    }

    @Test
    void keysNeedAStableText() {
        enum Role { LEADER }
        assertThat(registry.obtain("a")).isSameAs(registry.obtain("a"));
        assertThat(registry.obtain(42).resource()).isEqualTo("orders:42");
        assertThat(registry.obtain(42L)).isSameAs(registry.obtain(42));
        UUID id = UUID.randomUUID();
        assertThat(registry.obtain(id).resource()).isEqualTo("orders:" + id);
        assertThat(registry.obtain(Role.LEADER).resource()).isEqualTo("orders:LEADER");

        assertThatThrownBy(() -> registry.obtain(new Object())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("java.lang.Object").hasMessageContaining("no stable text");
        assertThatThrownBy(() -> registry.obtain(1.5)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("java.lang.Double");
        assertThatThrownBy(() -> new FencedLockRegistry(issuer).obtain(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Lock key ' '");
        assertThatThrownBy(() -> registry.obtain("k".repeat(300))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("longer than the 256");
        assertThatThrownBy(() -> registry.obtain(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("lock key");
    }

    @Test
    void misconfigurationFailsAtConstructionOrStartup() {
        assertThatThrownBy(() -> new FencedLockRegistry(null)).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("needs a TokenIssuer");
        assertThatThrownBy(() -> new FencedLockRegistry(issuer, null)).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("resourcePrefix");
        assertThatThrownBy(() -> new FencedLockRegistry(issuer, "bad\nprefix"))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("bad\nprefix");

        TokenIssuer unreachable = new TokenIssuer() {
            @Override
            public dev.fencing.issuer.Lease acquire(String resource, Duration timeout) {
                throw new AssertionError("not called");
            }

            @Override
            public void probe() {
                throw new IllegalStateException("lock service at 10.0.0.1:2181 did not answer");
            }
        };
        FencedLockRegistry bean = new FencedLockRegistry(unreachable);
        assertThatThrownBy(bean::afterPropertiesSet).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("FencedLockRegistry").hasMessageContaining("10.0.0.1:2181");
        registry.afterPropertiesSet(); // the in-memory issuer answers
    }

    @Test
    void aLockServiceThatNoRetryCanFixFailsEveryWayOfLockingAtOnceAndHoldsNothing() {
        java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();
        TokenIssuer broken = (resource, timeout) -> {
            attempts.incrementAndGet();
            throw new LockAcquisitionException(resource, "the lease table 'fencing_lease' is missing", null, false);
        };
        FencedLock lock = new FencedLockRegistry(broken, "orders:").obtain("1");
        // without the throw, lock() and lockInterruptibly() would ask again every second until the test's timeout,
        // and tryLock would say false as if another process held the lock
        assertThatThrownBy(lock::lock).hasMessageContaining("fencing_lease");
        assertThatThrownBy(lock::lockInterruptibly).hasMessageContaining("fencing_lease");
        assertThatThrownBy(lock::tryLock).hasMessageContaining("fencing_lease");
        assertThatThrownBy(() -> lock.tryLock(5, java.util.concurrent.TimeUnit.SECONDS))
                .hasMessageContaining("fencing_lease");
        assertThat(attempts).hasValue(4);
        assertThat(FencingContext.isEmpty()).isTrue();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class); // nothing held
    }

    /**
     * The resource's lock held by this thread through an acquiring @Fenced method: taking it through the registry
     * would wait for itself, so it is refused at once, naming the reason (a new user's trial saw tryLock(3 s) answer
     * false after 3 s; lock() would hang for ever).
     */
    @Test
    void aThreadHoldingTheResourceThroughAnAcquiringMethodIsRefusedInsteadOfWaitingForItself() throws Throwable {
        dev.fencing.guard.FenceGuard guard = new dev.fencing.guard.FenceGuard(
                new dev.fencing.store.InMemoryFenceStore(), issuer, Duration.ofSeconds(5));
        dev.fencing.guard.FencePoint transfer = new dev.fencing.guard.FencePoint("Orders.transfer()", "orders:7",
                null, null, true, false, dev.fencing.metrics.FencingMetrics.noop());
        FencedLock lock = registry.obtain("7");
        guard.invoke(transfer, new Object[0], () -> {
            assertThatThrownBy(lock::lock).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("'orders:7'").hasMessageContaining("would wait for itself");
            assertThatThrownBy(() -> lock.tryLock(5, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(lock::tryLock).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(lock::unlock).as("it holds nothing").isInstanceOf(IllegalMonitorStateException.class);
            return null;
        });
        // a task the acquiring call started carries its token; once the call gave the lock back, the task takes it
        // (a re-trial saw such a task refused with "This thread holds the lock" after the lock was free)
        AtomicReference<FencingToken> carried = new AtomicReference<>();
        Future<?> handed = guard.invoke(transfer, new Object[0], () -> {
            Runnable task = dev.fencing.context.FencingPropagation.runnable(() -> {
                carried.set(FencingContext.current("orders:7"));
                lock.lock();
                lock.unlock();
            });
            return pool.submit(() -> {
                Thread.sleep(200); // runs on after the acquiring call returned and released
                task.run();
                return null;
            });
        });
        handed.get(10, TimeUnit.SECONDS);
        assertThat(carried.get()).as("the task carried the acquiring call's token").isNotNull();
        lock.lock(); // free again: taken normally
        lock.unlock();
    }

    @Test
    void unusedLocksExpireHeldOnesStay() throws InterruptedException {
        FencedLock held = registry.obtain("held");
        FencedLock idle = registry.obtain("idle");
        held.lock();
        try {
            Thread.sleep(20);
            registry.expireUnusedOlderThan(10);
            assertThat(registry.obtain("held")).isSameAs(held);
            assertThat(registry.obtain("idle")).isNotSameAs(idle);
        } finally {
            held.unlock();
        }
    }

    @Test
    void executeLockedRunsWithTheTokenBound() throws Exception {
        FencingToken seen = registry.executeLocked("exec", () -> FencingContext.currentLocal("orders:exec"));
        assertThat(seen.resource()).isEqualTo("orders:exec");
        assertThat(issuer.isHeld("orders:exec")).isFalse();
        assertThat(FencingContext.isEmpty()).isTrue();
    }
}

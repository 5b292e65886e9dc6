package dev.fencing.integration;

import dev.fencing.context.FencingContext;
import dev.fencing.context.TokenUse;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.AcquisitionObservation;
import dev.fencing.guard.LogPace;
import dev.fencing.guard.RemoteTokenSetAsideException;
import dev.fencing.guard.UncheckedLeases;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.AcquisitionCounters;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.observation.ObservationRegistry;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A {@link Lock} on one resource of a {@link TokenIssuer}, obtained from {@link FencedLockRegistry#obtain}: the first
 * acquisition by a thread takes a lease from the issuer and binds its token in {@link FencingContext} on that thread,
 * and the matching {@link #unlock()} unbinds it and releases the lease. Reentrant per thread (nested acquisitions
 * share the lease and the token); only the holding thread may unlock, anyone else gets
 * {@link IllegalMonitorStateException}. A thread on which a caller's token for the resource is bound as remote (an HTTP
 * request's or a message's {@code Fencing-Token} header) cannot take the lock: every acquiring method throws
 * {@link RemoteTokenSetAsideException} before asking the issuer, as an acquiring {@code @Fenced} method does, since a
 * lock of its own would fence the caller's (perhaps stale) request with a fresh token.
 *
 * <p>A lease the lock service dropped while held (expired, session lost) is reported at the next reentrant
 * acquisition by the holder: {@link #tryLock} returns {@code false} and {@link #lock} throws, and the thread no
 * longer holds the lock (its token is unbound, the lease closed). This is how {@code LockRegistryLeaderInitiator}'s
 * heartbeat notices a lost leadership. Writes made under the old token in the meantime are refused by the fence.
 *
 * <p>A holding whose token no check presented (and no carrier sent) is reported when it ends, as an acquiring
 * {@code @Fenced} method's lock is: counted in {@code fencing.leases.unchecked} and logged at WARNING at most once per
 * resource every ten minutes (when acquiring {@code @Fenced} methods ran under it, reported as theirs), unless its
 * registry was told not to ({@link FencedLockRegistry#reportUnchecked(boolean)}).
 */
public final class FencedLock implements Lock {

    private static final System.Logger LOG = System.getLogger(FencedLock.class.getName());

    /** How long one issuer call of {@link #lock()} and {@link #lockInterruptibly()} waits before trying again. */
    static final Duration ATTEMPT = Duration.ofSeconds(1);
    /** The pause after an attempt that failed early (the lock service not answering), so the retry is no busy loop. */
    private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final String resource;
    private final TokenIssuer issuer;
    /** Exclusion and reentrancy between the threads of this JVM; the issuer excludes other processes. */
    private final ReentrantLock local = new ReentrantLock();
    /** The lease and binding of the holding thread; written only by that thread while it holds {@link #local}. */
    private volatile Hold hold;
    private volatile long lastUsedNanos = System.nanoTime();
    /**
     * The thread whose hold was dropped at a reentrant acquisition because its lease was lost, and how many of its
     * acquisitions were dropped with it: their {@code unlock()} calls still to come are told why they hold nothing.
     * Written by that thread only; cleared when it acquires again or has made them all.
     */
    private volatile Thread droppedHolder;
    private volatile int droppedHolds;
    private final AcquisitionCounters counters;
    private final BooleanSupplier reportUnchecked;
    private final Supplier<ObservationRegistry> observations;

    /** The resources whose unchecked holding was logged: one line each per ten minutes, up to 1,000 of them. */
    static final LogPace UNCHECKED_LOGS = new LogPace(1_000, 600_000, null);

    FencedLock(String resource, TokenIssuer issuer, AcquisitionCounters counters,
               BooleanSupplier reportUnchecked, Supplier<ObservationRegistry> observations) {
        this.resource = resource;
        this.issuer = issuer;
        this.counters = counters;
        this.reportUnchecked = reportUnchecked;
        this.observations = observations;
    }

    /** The issuer resource this lock takes leases on (the registry's prefix and the key's text). */
    public String resource() {
        return resource;
    }

    /**
     * The fencing token of the lease the current thread holds: capture it where the lock is held (in
     * {@code Candidate.onGranted}, for example) and bind it where the work runs.
     *
     * @throws IllegalMonitorStateException when the current thread does not hold this lock
     */
    public FencingToken token() {
        Hold current = hold;
        if (!local.isHeldByCurrentThread() || current == null) {
            throw notHeld("read the token of");
        }
        return current.lease.token();
    }

    /** Whether the current thread holds this lock and, as far as this process knows, its lease. */
    public boolean isHeldByCurrentThread() {
        Hold current = hold;
        return local.isHeldByCurrentThread() && current != null && current.lease.isHeld();
    }

    /**
     * Acquires the lock, waiting as long as it takes; an interrupt does not stop the wait (it is kept for the caller).
     *
     * @throws LockAcquisitionException when this thread held the lock and its lease was lost (the hold is dropped),
     *                                  or when no retry can help ({@link LockAcquisitionException#retryable()} false)
     */
    @Override
    public void lock() {
        if (local.isHeldByCurrentThread()) {
            reenter();
            return;
        }
        boolean interrupted = false;
        try (AcquisitionObservation wait = observe("lock()")) {
            local.lock();
            try {
                while (true) {
                    try {
                        wait.acquired(acquire(ATTEMPT));
                        return;
                    } catch (LockAcquisitionException notYet) {
                        rethrowIfBroken(notYet);
                        interrupted |= Thread.interrupted();
                        pauseAfterFailure();
                    }
                }
            } catch (RuntimeException | Error e) {
                local.unlock();
                counted(e);
                wait.failed(e);
                throw e;
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Acquires the lock unless the thread is interrupted, waiting as long as it takes.
     *
     * @throws InterruptedException     when interrupted before or while waiting; the lock is not held
     * @throws LockAcquisitionException when this thread held the lock and its lease was lost (the hold is dropped),
     *                                  or when no retry can help ({@link LockAcquisitionException#retryable()} false)
     */
    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (local.isHeldByCurrentThread()) {
            reenter();
            return;
        }
        try (AcquisitionObservation wait = observe("lockInterruptibly()")) {
            try {
                local.lockInterruptibly();
            } catch (InterruptedException e) {
                wait.cancelled();
                throw e;
            }
            try {
                while (true) {
                    try {
                        wait.acquired(acquire(ATTEMPT));
                        return;
                    } catch (LockAcquisitionException notYet) {
                        rethrowIfBroken(notYet);
                        if (Thread.interrupted()) {
                            throw interrupted(notYet);
                        }
                        pauseAfterFailure();
                    }
                }
            } catch (InterruptedException e) {
                local.unlock();
                wait.cancelled();
                throw e;
            } catch (RuntimeException | Error e) {
                local.unlock();
                counted(e);
                wait.failed(e);
                throw e;
            }
        }
    }

    /**
     * Acquires the lock if it is free now: one issuer call with a zero wait (a round trip to the lock service, no
     * waiting for a holder). {@code false} when it is held elsewhere or the service did not grant it, and when this
     * thread held it and its lease was lost (the hold is then dropped).
     *
     * @throws LockAcquisitionException when no retry can help ({@link LockAcquisitionException#retryable()} false: the
     *                                  lock service's setup is broken, such as a lease table dropped at runtime)
     */
    @Override
    public boolean tryLock() {
        if (local.isHeldByCurrentThread()) {
            return tryReenter();
        }
        if (!local.tryLock()) {
            return false;
        }
        boolean interrupted = Thread.interrupted(); // tryLock() does not answer interrupts: cleared, then kept
        try {
            acquire(Duration.ZERO);
            return true;
        } catch (LockAcquisitionException notGranted) {
            local.unlock();
            rethrowIfBroken(counted(notGranted));
            return false;
        } catch (RuntimeException | Error e) {
            local.unlock();
            counted(e);
            throw e;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Acquires the lock if it becomes free within {@code time}. {@code false} when it did not (held elsewhere, or
     * the lock service did not grant it in time), and when this thread held it and its lease was lost (the hold is
     * then dropped).
     *
     * @throws InterruptedException     when interrupted before or while waiting; the lock is not held
     * @throws LockAcquisitionException when no retry can help ({@link LockAcquisitionException#retryable()} false)
     */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("Interrupted before locking resource '" + resource + "'");
        }
        if (local.isHeldByCurrentThread()) {
            return tryReenter();
        }
        long deadline = System.nanoTime() + Math.max(0, unit.toNanos(time));
        if (!local.tryLock(time, unit)) {
            return false;
        }
        try {
            acquire(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            return true;
        } catch (LockAcquisitionException notGranted) {
            local.unlock();
            rethrowIfBroken(counted(notGranted));
            if (Thread.interrupted()) {
                throw interrupted(notGranted);
            }
            return false;
        } catch (RuntimeException | Error e) {
            local.unlock();
            counted(e);
            throw e;
        }
    }

    /**
     * Releases one acquisition of this thread; the last one unbinds the token and releases the lease (quietly when the
     * lease was lost: the fence refused whatever a stale write tried).
     *
     * @throws IllegalMonitorStateException when the current thread does not hold this lock
     * @throws IllegalStateException        when locks were unlocked out of order on this thread (the inner locks'
     *                                      tokens were unbound too), or the lease could not be released; this lock is
     *                                      released locally either way
     */
    @Override
    public void unlock() {
        if (!local.isHeldByCurrentThread()) {
            throw droppedHolder == Thread.currentThread() ? droppedUnlock() : notHeld("unlock");
        }
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        lastUsedNanos = System.nanoTime();
        Hold current = hold;
        hold = null;
        try {
            if (current != null) {
                current.end();
            }
        } finally {
            local.unlock();
        }
    }

    /** Not supported: a condition cannot wait on a lock held in a remote lock service. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("FencedLock on '" + resource + "' does not support conditions");
    }

    /** Whether no thread holds this lock and it was last used before {@code nanoTime}. */
    boolean isUnusedSince(long nanoTime) {
        return !local.isLocked() && lastUsedNanos - nanoTime < 0;
    }

    @Override
    public String toString() {
        Hold current = hold;
        return "FencedLock{" + resource + (current == null ? ", free" : ", held with " + current.lease.token()) + "}";
    }

    /**
     * One issuer call; on success the lease is bound on this thread, and its token returned. Requires {@link #local}
     * held once.
     *
     * @throws IllegalStateException when this thread holds the resource's lock already through an acquiring
     *                               {@code @Fenced} method or a ShedLock job
     */
    private FencingToken acquire(Duration timeout) {
        if (FencingContext.currentLocal(resource) == null) {
            FencingToken remote = FencingContext.current(resource);
            if (remote != null) {
                // a caller's token (header, message): a lock of our own would set it aside, its stale request landing
                throw RemoteTokenSetAsideException.forLock(resource, "a FencedLockRegistry", remote.value());
            }
        }
        TokenUse held = FencingContext.useOf(resource);
        if (held != null && held.isOpenOn(Thread.currentThread())) {
            // taken by this thread through an acquiring @Fenced method, a ShedLock job or another registry's lock,
            // and not given back: the lock service would make this thread wait for itself (lock() for ever). A token
            // propagated from the thread that holds it is no reason: that holder may give it back, so the wait is a
            // normal one
            throw new IllegalStateException("This thread holds the lock on resource '" + resource + "' already, "
                    + "through an acquiring @Fenced method, a ShedLock job or another FencedLockRegistry's lock: "
                    + "taking it again through this FencedLockRegistry would wait for itself. Take it once: a "
                    + "@Fenced(acquire = true) method called under a registry lock reuses that lock's token, and one "
                    + "registry per resource prefix keeps one lock per resource");
        }
        Lease lease = issuer.acquire(resource, timeout);
        TokenUse use = TokenUse.open(lease.token(), lease::isLost); // a check once it is known lost is refused
        FencingScope scope;
        try {
            scope = FencingContext.bindAcquired(lease.token(), use);
        } catch (RuntimeException | Error e) {
            use.close();
            lease.close();
            throw e;
        }
        FencingMetrics.increment(counters.acquired());
        lastUsedNanos = System.nanoTime();
        hold = new Hold(lease, scope, use, this);
        if (droppedHolder == Thread.currentThread()) {
            droppedHolder = null; // a new holding: the unlock() calls of the dropped one cannot be told apart
        }
        return lease.token();
    }

    /** A blocking wait for this lock, observed as {@code fencing.acquire} under its family's tag. */
    private AcquisitionObservation observe(String method) {
        return AcquisitionObservation.start(observations.get(), counters.resource(), resource,
                "FencedLock." + method);
    }

    private void reenter() {
        if (!tryReenter()) {
            throw new LockAcquisitionException(resource, "The lease on resource '" + resource
                    + "' held by this thread was lost; its token is unbound and the thread no longer holds the lock");
        }
    }

    /** A nested acquisition by the holder: counted while the lease is held, the hold dropped when it was lost. */
    private boolean tryReenter() {
        Hold current = hold;
        if (current != null && current.lease.isHeld()) {
            local.lock();
            return true;
        }
        hold = null;
        lastUsedNanos = System.nanoTime();
        droppedHolds = local.getHoldCount(); // the enclosing acquisitions, whose unlock() calls are still to come
        droppedHolder = Thread.currentThread();
        try {
            if (current != null) {
                current.end();
            }
        } catch (RuntimeException dropAnyway) {
            // the hold is gone either way; the caller learns it from the false result
        } finally {
            while (local.isHeldByCurrentThread()) {
                local.unlock();
            }
        }
        return false;
    }

    private static void pauseAfterFailure() {
        LockSupport.parkNanos(RETRY_PAUSE_NANOS);
    }

    /**
     * Throws {@code failure} when no retry can help ({@link LockAcquisitionException#retryable()} false, a lease
     * table dropped at runtime): a wait would spin until the repair, and {@code false} would look like a held lock.
     */
    private static void rethrowIfBroken(LockAcquisitionException failure) {
        if (!failure.retryable()) {
            throw failure;
        }
    }

    /**
     * Counts {@code failure}, about to reach the caller, in {@code fencing.acquisitions} (outcome failed) unless it
     * is a lock not granted that the caller is told of by {@code false}; returns it.
     */
    private <T extends Throwable> T counted(T failure) {
        if (!(failure instanceof LockAcquisitionException notGranted) || !notGranted.retryable()) {
            counters.failed().increment(failure);
        }
        return failure;
    }

    /** Reports a holding that ended with its token unused: counted, and logged at a pace. */
    private void reportUnchecked(TokenUse use, FencingToken token) {
        if (use.isUsed() || !reportUnchecked.getAsBoolean()) {
            return;
        }
        if (!use.callers().isEmpty()) {
            UncheckedLeases.reportCallers(use, token); // acquiring methods ran under it: reported as theirs
            return;
        }
        FencingMetrics.increment(counters.unchecked());
        long heldBack = UNCHECKED_LOGS.due(resource, System.currentTimeMillis());
        if (heldBack >= 0) {
            LOG.log(System.Logger.Level.WARNING, () -> uncheckedMessage(token)
                    + (heldBack > 0 ? " (" + heldBack + " more since the last line)" : ""));
        }
    }

    /** What the WARNING says of a holding whose token nothing checked. */
    String uncheckedMessage(FencingToken token) {
        return "FencedLock on resource '" + resource + "' was held with token " + token.value() + " and no @Fenced "
                + "check presented it, nor did a carrier send it: nothing fenced what was written under the lock, so "
                + "a holder paused past its lease could have written over the next one. Write through "
                + "@Fenced methods whose resource (with its key) is '" + resource + "', on the holding thread or "
                + "with the token bound where the work runs (FencingContext.bind(lock.token())). "
                + "Counted in fencing.leases.unchecked every time; logged at most once per resource every ten minutes";
    }

    private InterruptedException interrupted(LockAcquisitionException cause) {
        InterruptedException e = new InterruptedException("Interrupted while locking resource '" + resource + "'");
        e.initCause(cause);
        return e;
    }

    /**
     * The failure of an {@code unlock()} matching an acquisition whose hold was dropped when the lease was found lost:
     * it says so (the caller's {@code finally} block would otherwise replace the loss with a bare "does not hold it").
     */
    private IllegalMonitorStateException droppedUnlock() {
        if (--droppedHolds <= 0) {
            droppedHolder = null;
        }
        IllegalMonitorStateException e = notHeld("unlock");
        return new IllegalMonitorStateException(e.getMessage() + " any more: its lease was lost while it was held, "
                + "so a nested acquisition on this thread (lock() threw LockAcquisitionException, tryLock returned "
                + "false) dropped the hold, unbound the token and closed the lease; nothing is left to unlock");
    }

    private IllegalMonitorStateException notHeld(String what) {
        return new IllegalMonitorStateException("Cannot " + what + " the lock on resource '" + resource
                + "': the current thread (" + Thread.currentThread().getName() + ") does not hold it");
    }

    /** The lease of one holding, its binding on the holding thread, and whether a check presented its token. */
    private record Hold(Lease lease, FencingScope scope, TokenUse use, FencedLock lock) {

        /** Unbinds, then releases, reporting the first failure after doing both; then reports an unused token. */
        void end() {
            use.close();
            lock.reportUnchecked(use, lease.token());
            RuntimeException failure = null;
            try {
                scope.close();
            } catch (IllegalStateException outOfOrder) {
                failure = new IllegalStateException("Lock on resource '" + lease.token().resource()
                        + "' was unlocked while a lock taken after it on this thread was still held: unlock in reverse "
                        + "order; the inner locks' tokens were unbound too (" + outOfOrder.getMessage() + ")",
                        outOfOrder);
            }
            try {
                lease.close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
            if (failure != null) {
                throw failure;
            }
        }
    }
}

package dev.fencing.shedlock;

import dev.fencing.context.FencingScope;
import dev.fencing.issuer.Lease;
import net.javacrumbs.shedlock.core.SimpleLock;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A ShedLock lock granted with fencing tokens bound: {@link #unlock()} closes the binding, releases the issuer's
 * leases and unlocks the wrapped lock, in that order, each step also when an earlier one failed. {@link #extend}
 * extends the wrapped lock and hands the binding and leases on to the lock it returns; this one is then spent.
 */
final class FencedLock implements SimpleLock {

    private final String name;
    private final SimpleLock delegate;
    private final List<Lease> leases;
    private final FencingScope scope;
    private final Thread owner;
    private boolean spent;

    FencedLock(String name, SimpleLock delegate, List<Lease> leases, FencingScope scope, Thread owner) {
        this.name = name;
        this.delegate = delegate;
        this.leases = leases;
        this.scope = scope;
        this.owner = owner;
    }

    @Override
    public void unlock() {
        checkNotSpent("unlock");
        spent = true;
        RuntimeException failure = null;
        if (scope != null) {
            if (Thread.currentThread() != owner) {
                failure = new IllegalStateException("ShedLock lock '" + name + "' was unlocked on thread "
                        + Thread.currentThread().getName() + " but its fencing tokens are bound on " + owner.getName()
                        + ", where they stay until that thread ends: lock and unlock on one thread (ShedLock's "
                        + "LockingTaskExecutor does). The leases and the lock were released");
            } else {
                try {
                    scope.close();
                } catch (RuntimeException e) {
                    failure = e;
                }
            }
        }
        failure = releaseAll(leases, failure);
        try {
            delegate.unlock();
        } catch (RuntimeException e) {
            failure = addTo(failure, e);
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        checkNotSpent("extend");
        Optional<SimpleLock> extended = delegate.extend(lockAtMostFor, lockAtLeastFor);
        if (extended.isEmpty()) {
            return Optional.empty();
        }
        spent = true;
        return Optional.of(new FencedLock(name, extended.get(), leases, scope, owner));
    }

    private void checkNotSpent(String operation) {
        if (spent) {
            throw new IllegalStateException("Cannot " + operation + " ShedLock lock '" + name
                    + "': it was unlocked or extended already");
        }
    }

    /** Releases every lease, returning {@code failure} with any release failure added (or the first one). */
    static <T extends Throwable> T releaseAll(List<Lease> leases, T failure) {
        for (int i = leases.size() - 1; i >= 0; i--) {
            try {
                leases.get(i).close();
            } catch (RuntimeException e) {
                failure = addTo(failure, e);
            }
        }
        return failure;
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T addTo(T failure, RuntimeException e) {
        if (failure == null) {
            return (T) e;
        }
        failure.addSuppressed(e);
        return failure;
    }

    @Override
    public String toString() {
        return "FencedLock[" + name + ", " + leases.size() + " lease(s), " + delegate + "]";
    }
}

package dev.fencing.shedlock;

import dev.fencing.context.FencingScope;
import dev.fencing.context.TokenUse;
import dev.fencing.guard.UncheckedLeases;
import dev.fencing.issuer.Lease;
import dev.fencing.metrics.AcquisitionCounters;
import dev.fencing.metrics.FencingMetrics;
import net.javacrumbs.shedlock.core.SimpleLock;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A ShedLock lock granted with fencing tokens bound: {@link #unlock()} closes the binding, releases the issuer's
 * leases and unlocks the wrapped lock, in that order, each step also when an earlier one failed. {@link #extend}
 * extends the wrapped lock and hands the binding and leases on to the lock it returns; this one is then spent. A
 * token that no {@code @Fenced} check presented while the job held the lock (and no carrier sent) is reported at the
 * unlock: when acquiring {@code @Fenced} methods ran under it, as their own unchecked lock would be (counted in
 * {@code fencing.leases.unchecked}, named in a WARNING); else counted in {@code fencing.leases.unchecked} of the
 * resource every time and logged at WARNING at most once per lock name and resource every ten minutes (up to 1,000
 * of them): the job's writes under it were not fenced.
 */
final class FencedLock implements SimpleLock {

    private static final System.Logger LOG = System.getLogger(FencedLock.class.getName());

    /** The lock name and resource pairs whose unchecked token was logged: one line each per interval, up to a bound. */
    static final OncePerKey REPORTED = new OncePerKey(1_000, 600_000);

    private final String name;
    private final SimpleLock delegate;
    private final List<Lease> leases;
    /** Per lease, in order: whether a check presented its token. */
    private final List<TokenUse> uses;
    /** Per lease, in order: the counters of its resource. */
    private final List<AcquisitionCounters> counters;
    /** Whether the lock name has no mapping (its resource is the name itself). */
    private final boolean unmapped;
    private final FencingScope scope;
    private final Thread owner;
    private boolean spent;

    FencedLock(String name, SimpleLock delegate, List<Lease> leases, List<TokenUse> uses,
               List<AcquisitionCounters> counters, boolean unmapped, FencingScope scope, Thread owner) {
        this.name = name;
        this.delegate = delegate;
        this.leases = leases;
        this.uses = uses;
        this.counters = counters;
        this.unmapped = unmapped;
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
        reportUnchecked();
        if (failure != null) {
            throw failure;
        }
    }

    private void reportUnchecked() {
        uses.forEach(TokenUse::close);
        for (int i = 0; i < leases.size(); i++) {
            TokenUse use = uses.get(i);
            if (use.isUsed()) {
                continue;
            }
            if (!use.callers().isEmpty()) {
                // acquiring methods ran under the job's token: counted and named like their own unchecked locks
                UncheckedLeases.reportCallers(use, leases.get(i).token());
                continue;
            }
            FencingMetrics.increment(counters.get(i).unchecked());
            String resource = leases.get(i).token().resource();
            String last = REPORTED.first(name + '\n' + resource, System.currentTimeMillis());
            if (last != null) {
                LOG.log(System.Logger.Level.WARNING, () -> unreportedMessage(resource) + last);
            }
        }
    }

    /** What the WARNING says of a run whose token of {@code resource} nothing checked. */
    String unreportedMessage(String resource) {
        return "The run of the job under ShedLock lock '" + name + "' held the fencing token of resource '"
                + resource + "' and no @Fenced check presented it, nor did a carrier send it: nothing fenced what it "
                + "wrote, so a run that overran lockAtMostFor could have written over the next one. Either the job "
                + "wrote around the fence, or handed its writes to threads that outlived the run (the lock and the "
                + "token are given back when the job method returns: wait for them before it does), or it failed "
                + "before its first fenced write. " + (unmapped ? "With no mapping the resource is the lock name: "
                + "if the job writes through @Fenced methods of another resource, map the lock name to it "
                + "(@EnableSchedulerLockFencing(resources = \"" + name + "=<resource>\")); else write through "
                + "@Fenced(resource = \"" + resource + "\") methods." : "Write through @Fenced(resource = \""
                + resource + "\") methods.") + " Counted in fencing.leases.unchecked every time; logged at most once "
                + "per lock name and resource every ten minutes";
    }

    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        checkNotSpent("extend");
        Optional<SimpleLock> extended = delegate.extend(lockAtMostFor, lockAtLeastFor);
        if (extended.isEmpty()) {
            return Optional.empty();
        }
        spent = true;
        return Optional.of(new FencedLock(name, extended.get(), leases, uses, counters, unmapped, scope, owner));
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

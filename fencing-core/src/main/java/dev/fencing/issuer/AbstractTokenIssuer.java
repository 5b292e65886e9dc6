package dev.fencing.issuer;

import dev.fencing.FencingException;
import dev.fencing.metrics.IssuerMetrics;
import io.micrometer.core.instrument.MeterRegistry;

import java.time.Duration;

/**
 * The one place where every issuer's acquire and release are counted and made safe; an issuer implements only
 * {@link #doAcquire} and {@link #doRelease}, talking to its lock service.
 *
 * <p><b>Acquire:</b> checks the arguments ({@link TokenIssuer#checkAcquire}), calls {@link #doAcquire}, and counts
 * {@code acquired} or {@code failed} (tagged with the exception) in {@link IssuerMetrics}. A library exception passes
 * through; an interrupt becomes a {@link LockAcquisitionException} with the thread's interrupt status set; any other
 * exception is wrapped by {@link #failure}. When the lock had already been granted ({@link Grant#granted}), it is
 * given back before the exception is thrown, even on an interrupted thread (the interrupt is kept); a failure to give
 * it back is added to the exception as suppressed.
 *
 * <p><b>Went back:</b> unless a subclass opts out (its counter lives in this JVM, or it guards one sequence for all
 * resources itself), the issuer remembers the highest token it handed out per resource, for the 10,000 resources
 * locked most recently. A token at or below it (the lock service's counter went back: a table restored from an older
 * backup, a wiped Redis or CP group) is refused, fail closed, and its lease released: a paused holder of the earlier
 * token could still write after the new holder on a resource the fence has not seen it on ({@link #wentBack}). Only
 * those tokens are refused: a counter that each refused grant advances serves again once it passes that highest one.
 *
 * <p><b>Release</b> ({@link Lease#close()}): once per lease; an interrupt does not stop it (cleared for
 * {@link #doRelease}, set again afterwards); a release that finds the lock no longer this lease's counts the lease as
 * lost (once, also when the lock service had reported the loss before); a failure to release a lease that was lost is
 * quiet, a failure on a lease that was held is thrown.
 *
 * @param <L> the issuer's lease type
 */
public abstract class AbstractTokenIssuer<L extends AbstractLease> implements TokenIssuer {

    /** This issuer's counters ({@code issuer} tag as given to the constructor). */
    protected final IssuerMetrics metrics;

    private final String kind;

    /** The highest token handed out per resource, or {@code null} when this issuer does not remember them. */
    private final IssuedHere issuedHere;

    /**
     * An issuer that remembers the tokens it handed out and refuses one that went back.
     *
     * @param registry where the issuer's counters are registered, or {@code null} for none
     * @param kind     the {@code issuer} tag, e.g. {@code zookeeper}
     */
    protected AbstractTokenIssuer(MeterRegistry registry, String kind) {
        this(registry, kind, true);
    }

    /**
     * @param registry        where the issuer's counters are registered, or {@code null} for none
     * @param kind            the {@code issuer} tag, e.g. {@code zookeeper}
     * @param rememberIssued  {@code false} only for an issuer whose counter cannot go back under it (kept in this JVM)
     *                        or that refuses a sequence that went back for all resources itself
     */
    protected AbstractTokenIssuer(MeterRegistry registry, String kind, boolean rememberIssued) {
        this.metrics = new IssuerMetrics(registry, kind);
        this.kind = kind;
        this.issuedHere = rememberIssued ? new IssuedHere() : null;
    }

    /**
     * The highest token this issuer handed out for {@code resource}, when it is among the resources remembered; 0
     * otherwise. A {@link dev.fencing.recovery.IssuedTokens#highestIssued} answer should never be below it.
     */
    protected final long issuedHere(String resource) {
        return issuedHere == null ? 0 : issuedHere.highest(resource);
    }

    /**
     * The exception for a token at or below one this issuer handed out for the resource before: the lock service's
     * counter went back. Not retryable: the counter needs raising (past the fence store's max_seen, which this issuer
     * does not know). Each such acquisition is refused until a token is above {@code issuedBefore}; where the lock
     * service counted the refused grant too (a counter per resource that each grant advances: Redis through Redisson,
     * the JDBC lease), acquisitions succeed again by themselves after at most {@code issuedBefore - token} more, with
     * tokens above everything this issuer handed out, which the fence store still refuses while they are at or below
     * its max_seen (stale, or duplicate at max_seen: the holder differs). Override to name the lock service and how to
     * raise its counter.
     */
    protected LockAcquisitionException wentBack(String resource, long token, long issuedBefore) {
        return new LockAcquisitionException(resource, "The token counter of resource '" + resource + "' ("
                + kind + " issuer) went back: the lock service handed out " + token + ", yet this issuer "
                + "handed out " + issuedBefore + " for it before (its data lost, restored from an older backup, or "
                + "another service at the same address). A holder of a token up to " + issuedBefore + " may still "
                + "write, so none up to it is handed out (fail closed); the lock was given back. Raise the lock "
                + "service's counter above it, or move to another issuer with an offset (docs/issuers.md)", null,
                false);
    }

    /**
     * Gets the lock from the lock service and builds its lease. Call {@link Grant#granted} as soon as the service has
     * granted the lock, with the way to give it back: every failure after that (reading the token, building the
     * lease, an interrupt) gives it back.
     *
     * @param resource a checked resource
     * @param timeout  a checked, non-negative timeout
     * @param grant    where to register the give-back once the lock is granted
     * @throws LockAcquisitionException when the lock is not obtained in time, with a message naming the service
     * @throws Exception                anything else; wrapped by {@link #failure}
     */
    protected abstract L doAcquire(String resource, Duration timeout, Grant grant) throws Exception;

    /**
     * Gives the lock of a lease back to the lock service; called once per lease, with the thread's interrupt status
     * cleared.
     *
     * @return {@code false} when the lock was no longer this lease's (expired and taken over, its session gone): the
     *         lease is then counted as lost
     * @throws Exception when the lock service could not be told; quiet for a lost lease
     */
    protected abstract boolean doRelease(L lease) throws Exception;

    /**
     * The exception thrown for a failed acquire that {@link #doAcquire} did not describe itself (an exception of the
     * lock service's client). Override to name the service and unwrap its client's wrappers.
     */
    protected LockAcquisitionException failure(String resource, Duration timeout, Exception cause) {
        return new LockAcquisitionException(resource, "Could not lock resource '" + resource + "': " + cause, cause);
    }

    /** Whether the acquiring thread is interrupted, or an interrupt is behind {@code failure}. */
    private static boolean interrupted(Throwable failure) {
        if (Thread.currentThread().isInterrupted()) {
            return true;
        }
        int depth = 0;
        for (Throwable t = failure; t != null && depth < 16; t = t.getCause(), depth++) {
            if (t instanceof InterruptedException) {
                return true;
            }
        }
        return false;
    }

    @Override
    public final Lease acquire(String resource, Duration timeout) {
        TokenIssuer.checkAcquire(resource, timeout);
        Grant grant = new Grant();
        // read before the lock request: every token granted after it must be above what was handed out before
        long issuedBefore = issuedHere(resource);
        try {
            L lease = doAcquire(resource, timeout, grant);
            if (issuedHere != null) {
                long token = lease.token().value();
                if (token <= issuedBefore) {
                    grant.giveBack = () -> releaseLease(lease); // the lease is built: its release gives the lock back
                    throw wentBack(resource, token, issuedBefore);
                }
                issuedHere.issued(resource, token);
            }
            grant.giveBack = null;
            metrics.acquired();
            return lease;
        } catch (FencingException e) {
            throw failed(grant, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failed(grant, new LockAcquisitionException(resource,
                    "Interrupted while locking resource '" + resource + "'", e));
        } catch (Exception e) {
            throw failed(grant, failure(resource, timeout, e));
        } catch (Error e) {
            throw failed(grant, e);
        }
    }

    /**
     * Counts a failed acquire (cancelled when its thread was interrupted: its caller gave up) and gives a granted lock
     * back; returns {@code failure} to be thrown.
     */
    private <T extends Throwable> T failed(Grant grant, T failure) {
        if (interrupted(failure)) {
            metrics.cancelled();
        } else {
            metrics.failed(failure);
        }
        GiveBack giveBack = grant.giveBack;
        if (giveBack != null) {
            grant.giveBack = null;
            boolean interrupted = Thread.interrupted(); // an interrupt must not stop the give-back: cleared, then kept
            try {
                giveBack.run();
            } catch (Exception | Error e) {
                if (e instanceof InterruptedException) {
                    interrupted = true;
                }
                failure.addSuppressed(e);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        return failure;
    }

    /**
     * Records that the lock service dropped {@code lease} while it was held (session lost, lease expired, lock taken
     * over) and, when {@code count}, counts it in {@code fencing.issuer.leases.lost}: once per lease, and never for a
     * lease that was released first.
     *
     * @return whether this call made the lease lost
     */
    protected final boolean markLost(L lease, boolean count) {
        boolean first = lease.markLost();
        if (first && count) {
            metrics.lost();
            warnLost(lease, "while it was held");
        }
        return first;
    }

    /**
     * Records that the release of {@code lease} found its lock no longer this lease's, and counts it in
     * {@code fencing.issuer.leases.lost} unless the loss was counted before: what a {@link #doRelease} returning
     * {@code false} does, for an issuer that finishes a release in the background.
     */
    protected final void lostAtRelease(L lease) {
        if (lease.markLostAtRelease()) {
            metrics.lost();
            warnLost(lease, "before it was released (found at release)");
        }
    }

    private static final System.Logger LOG = System.getLogger(AbstractTokenIssuer.class.getName());

    /** A lost lease is the zombie case: said once per lease, at WARNING, besides the counter. */
    private static void warnLost(AbstractLease lease, String when) {
        try {
            LOG.log(System.Logger.Level.WARNING, () -> "Lost the lock on '" + lease.token().resource() + "' ("
                    + tokenText(lease) + ") " + when + ": another holder may have it now. From here on, a "
                    + "check in enforce mode that presents this token through its acquiring call's binding (on any "
                    + "thread) is refused as stale before the store; elsewhere (another process it was sent to) the "
                    + "store refuses it once a holder with a higher token has written. Writes checked before that, "
                    + "writes in observe mode (counted enforced=false) and writes no check covers are not undone by "
                    + "this");
        } catch (RuntimeException ignored) {
            // logging is advisory
        }
    }

    /** The token the holder presents, and the lock service's own count beside it when an offset shifted it. */
    private static String tokenText(AbstractLease lease) {
        long own = lease.token().value();
        long shown = lease.presented().value();
        return shown == own ? "token " + own : "token " + shown + ", " + own + " as the lock service counts it";
    }

    /** Releases {@code lease}; called by {@link AbstractLease#close()}. */
    final void releaseLease(AbstractLease lease) {
        if (!lease.markReleased()) {
            return;
        }
        @SuppressWarnings("unchecked")
        L mine = (L) lease; // an AbstractLease is built for its own issuer only
        boolean interrupted = Thread.interrupted(); // an interrupt must not stop the release: cleared, then kept
        try {
            if (!doRelease(mine)) {
                lostAtRelease(mine);
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                interrupted = true;
            }
            if (!lease.lostFlag()) {
                if (e instanceof RuntimeException runtime) {
                    throw runtime;
                }
                throw new IllegalStateException("Could not release " + lease + ": " + e, e);
            }
            // a lost lease: its lock is gone or goes with its session; releasing it is best effort
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** How to give back a lock that was granted and is not handed out. */
    @FunctionalInterface
    protected interface GiveBack {
        void run() throws Exception;
    }

    /** Where {@link #doAcquire} registers how to give back a lock once it is granted. */
    protected static final class Grant {
        private GiveBack giveBack;

        Grant() {
        }

        /** The lock service granted the lock: a failure from now on runs {@code giveBack}. */
        public void granted(GiveBack giveBack) {
            this.giveBack = giveBack;
        }
    }
}

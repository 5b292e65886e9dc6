package dev.fencing.shedlock;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.TokenUse;
import dev.fencing.guard.AcquisitionObservation;
import dev.fencing.guard.RemoteTokenSetAsideException;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.AcquisitionCounters;
import dev.fencing.metrics.ResourceFamilies;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.observation.ObservationRegistry;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * A ShedLock {@link LockProvider} that fences the jobs it locks, for any ShedLock provider it wraps. Once the
 * wrapped provider grants a lock, it takes a lease from the {@link TokenIssuer} for each resource the lock name maps
 * to (the lock name itself unless mapped) and binds the tokens on the calling thread, the job's thread under
 * {@code @SchedulerLock}, until {@link SimpleLock#unlock()}, which closes the binding, releases the leases and then
 * unlocks the wrapped lock; {@code @Fenced} writes of a job that overran {@code lockAtMostFor} are then refused.
 *
 * <p>Fails closed: when the issuer cannot grant a lease in time, the wrapped lock is unlocked again and the
 * issuer's exception propagates, so the job does not run. Lock and unlock must run on one thread, as ShedLock's own
 * executor does.
 */
public final class FencingLockProvider implements LockProvider {

    /** How long a job waits for the issuer's lease once ShedLock granted its lock, unless configured. */
    public static final Duration DEFAULT_ACQUIRE_TIMEOUT = Duration.ofSeconds(5);

    private final LockProvider delegate;
    private final TokenIssuer issuer;
    private final Map<String, Set<String>> resources;
    private final boolean mappedOnly;
    private final Duration acquireTimeout;
    private final ResourceFamilies<AcquisitionCounters> counters;
    private final ObservationRegistry observations;

    private FencingLockProvider(Builder b) {
        this.delegate = b.delegate;
        this.issuer = b.issuer;
        this.resources = Collections.unmodifiableMap(new LinkedHashMap<>(b.resources));
        this.mappedOnly = b.mappedOnly;
        this.acquireTimeout = b.acquireTimeout;
        this.counters = new ResourceFamilies<>(ResourceFamilies.MAX_TAGS, b.metrics::acquisitions);
        this.observations = b.observations;
    }

    /** Starts a builder wrapping {@code delegate} (any ShedLock provider) with tokens from {@code issuer}. */
    public static Builder builder(LockProvider delegate, TokenIssuer issuer) {
        return new Builder(delegate, issuer);
    }

    /**
     * Locks with the wrapped provider and, when it grants the lock, acquires and binds a token per resource of
     * {@code lockConfiguration}'s name. Resources that already have a token bound locally on this thread (an
     * enclosing job or acquiring call) keep it and are not acquired again. A resource whose token on this thread came
     * from a caller (bound as remote: an HTTP or message header) is refused before anything is locked, as an acquiring
     * {@code @Fenced} method and a {@code FencedLockRegistry} lock refuse it: a lease of the job's own would set the
     * caller's token aside, and a stale caller's request would be written under it.
     *
     * @throws RemoteTokenSetAsideException  when a caller's token for one of the resources is bound on this thread
     *                                       (nothing was locked)
     * @throws FencingConfigurationException when only mapped names are allowed and the name has no mapping
     *                                       (nothing was locked)
     * @throws RuntimeException              the issuer's exception when a lease could not be had (the wrapped lock
     *                                       was unlocked again, nothing is bound)
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
        String name = lockConfiguration.getName();
        Set<String> toFence = resourcesFor(name);
        for (String resource : toFence) {
            if (FencingContext.currentLocal(resource) == null) {
                FencingToken remote = FencingContext.current(resource);
                if (remote != null) {
                    // a caller's token (header, message): a lease of our own would set it aside, its request landing
                    throw RemoteTokenSetAsideException.forLock(resource, "the FencingLockProvider of ShedLock lock '"
                            + name + "'", remote.value());
                }
            }
        }
        Optional<SimpleLock> granted = delegate.lock(lockConfiguration);
        if (granted.isEmpty()) {
            return granted;
        }
        List<Lease> leases = new ArrayList<>(toFence.size());
        List<TokenUse> uses = new ArrayList<>(toFence.size());
        List<AcquisitionCounters> counted = new ArrayList<>(toFence.size());
        try {
            List<FencingToken> tokens = new ArrayList<>(toFence.size());
            for (String resource : toFence) {
                if (FencingContext.currentLocal(resource) == null) {
                    AcquisitionCounters counters = this.counters.of(resource);
                    Lease lease = acquire(name, resource, counters);
                    leases.add(lease);
                    tokens.add(lease.token());
                    uses.add(TokenUse.open(lease.token(), lease::isLost)); // refused once known lost
                    counted.add(counters);
                }
            }
            FencingScope scope = tokens.isEmpty() ? null : FencingContext.bindAcquired(tokens, uses);
            return Optional.of(new FencedLock(name, granted.get(), leases, uses, counted,
                    !resources.containsKey(name), scope, Thread.currentThread()));
        } catch (RuntimeException | Error e) {
            uses.forEach(TokenUse::close);
            FencedLock.releaseAll(leases, e);
            try {
                granted.get().unlock();
            } catch (RuntimeException unlockFailure) {
                e.addSuppressed(unlockFailure);
            }
            throw e;
        }
    }

    /**
     * The lease of {@code resource} for a run under lock {@code name}, counted in {@code fencing.acquisitions} and its
     * wait observed as {@code fencing.acquire}. A lease not granted names the job and what usually holds it: ShedLock
     * has granted its lock, so the holder is a run the lock no longer excludes.
     */
    private Lease acquire(String name, String resource, AcquisitionCounters counters) {
        try {
            Lease lease = AcquisitionObservation.acquire(observations, counters.resource(), "ShedLock job '" + name
                    + "'", issuer, resource, acquireTimeout);
            FencingMetrics.increment(counters.acquired());
            return lease;
        } catch (LockAcquisitionException e) {
            counters.failed().increment(e);
            throw new LockAcquisitionException(resource, "ShedLock granted lock '" + name + "', but the fencing lease "
                    + "on resource '" + resource + "' was not granted within " + acquireTimeout + "; the job did not "
                    + "run. Another holder has the lease: a run of another job mapped to the same resource, or an "
                    + "earlier run whose lease outlives its lockAtMostFor (give the issuer's lease at most the "
                    + "shortest lockAtMostFor of the jobs it fences), or the lock service did not answer: "
                    + e.getMessage(), e, e.retryable());
        } catch (RuntimeException e) {
            counters.failed().increment(e);
            throw e;
        }
    }

    /**
     * The resources a job under lock {@code lockName} is fenced for, in the order their leases are taken (sorted,
     * so two jobs sharing resources never wait on each other crosswise).
     *
     * @throws FencingConfigurationException when only mapped names are allowed and {@code lockName} has none
     */
    public Set<String> resourcesFor(String lockName) {
        Set<String> mapped = resources.get(lockName);
        if (mapped != null) {
            return mapped;
        }
        if (mappedOnly) {
            throw new FencingConfigurationException("ShedLock lock '" + lockName + "' has no fencing resource mapped: "
                    + "map it with FencingLockProvider.Builder.resources(\"" + lockName + "\", ...) or "
                    + "@EnableSchedulerLockFencing(resources = \"" + lockName + "=<resource>\"); mapped: "
                    + resources.keySet());
        }
        TokenIssuer.checkAcquire(lockName, acquireTimeout);
        return Collections.singleton(lockName);
    }

    /** Each mapped lock name with the resources its jobs are fenced for, in the order they were mapped. */
    public Map<String, Set<String>> mappings() {
        return resources;
    }

    /** Whether a lock name without a mapping is refused instead of fenced under its own name. */
    public boolean mappedOnly() {
        return mappedOnly;
    }

    /** The wrapped provider. */
    public LockProvider delegate() {
        return delegate;
    }

    @Override
    public String toString() {
        return "FencingLockProvider[" + delegate + ", resources " + resources + (mappedOnly ? ", mapped only" : "")
                + ", acquire timeout " + acquireTimeout + "]";
    }

    /**
     * Configures a {@link FencingLockProvider}: which resources each lock name is fenced for, whether unmapped
     * names are refused, and how long to wait for the issuer. Each setting is checked when it is set.
     */
    public static final class Builder {

        private final LockProvider delegate;
        private final TokenIssuer issuer;
        private final Map<String, Set<String>> resources = new LinkedHashMap<>();
        private boolean mappedOnly;
        private Duration acquireTimeout = DEFAULT_ACQUIRE_TIMEOUT;
        private FencingMetrics metrics = FencingMetrics.noop();
        private ObservationRegistry observations = ObservationRegistry.NOOP;

        private Builder(LockProvider delegate, TokenIssuer issuer) {
            if (delegate == null) {
                throw new FencingConfigurationException("FencingLockProvider needs the ShedLock LockProvider to wrap");
            }
            if (delegate instanceof FencingLockProvider) {
                throw new FencingConfigurationException("LockProvider " + delegate + " is fenced already: wrap the "
                        + "ShedLock provider once");
            }
            if (issuer == null) {
                throw new FencingConfigurationException("FencingLockProvider around " + delegate + " needs a "
                        + "TokenIssuer: the tokens of ShedLock jobs come from it (a durable one: ZooKeeper, etcd or "
                        + "JdbcTokenIssuer)");
            }
            this.delegate = delegate;
            this.issuer = issuer;
        }

        /**
         * Fences jobs under {@code lockName} for {@code resources} (the {@code @Fenced} resources they write, with
         * their key when the write has one: {@code "accounts:42"}) instead of for the lock name.
         *
         * @throws FencingConfigurationException when a resource is not one a token accepts, none is given, or the
         *                                       name is mapped twice
         */
        public Builder resources(String lockName, String... resources) {
            if (lockName == null || lockName.isBlank()) {
                throw new FencingConfigurationException("ShedLock lock name must not be blank in a fencing mapping");
            }
            if (resources == null || resources.length == 0) {
                throw new FencingConfigurationException("ShedLock lock '" + lockName + "' is mapped to no resource");
            }
            if (this.resources.containsKey(lockName)) {
                throw new FencingConfigurationException("ShedLock lock '" + lockName + "' is mapped twice: "
                        + this.resources.get(lockName) + " and " + List.of(resources));
            }
            Set<String> sorted = new TreeSet<>();
            for (String resource : resources) {
                try {
                    TokenIssuer.checkAcquire(resource, Duration.ZERO);
                } catch (IllegalArgumentException e) {
                    throw new FencingConfigurationException("ShedLock lock '" + lockName + "' is mapped to a resource "
                            + "no token can carry: " + e.getMessage(), e);
                }
                sorted.add(resource);
            }
            this.resources.put(lockName, Collections.unmodifiableSet(sorted));
            return this;
        }

        /**
         * Refuses lock names without a {@link #resources mapping} instead of fencing them under their own name:
         * a job whose lock name differs from the resources it writes then fails at startup
         * ({@code @EnableSchedulerLockFencing} checks every {@code @SchedulerLock}) or at its first lock, not at its
         * first write.
         */
        public Builder mappedOnly(boolean mappedOnly) {
            this.mappedOnly = mappedOnly;
            return this;
        }

        /**
         * How long a job waits for the issuer's lease once ShedLock granted its lock (default
         * {@link #DEFAULT_ACQUIRE_TIMEOUT}); past it the job does not run.
         */
        public Builder acquireTimeout(Duration acquireTimeout) {
            if (acquireTimeout == null || acquireTimeout.isNegative()) {
                throw new FencingConfigurationException("acquireTimeout must not be negative, was " + acquireTimeout);
            }
            this.acquireTimeout = acquireTimeout;
            return this;
        }

        /**
         * Where the jobs' leases are counted: {@code fencing.acquisitions} (acquired, failed) and
         * {@code fencing.leases.unchecked} (a run whose token no check presented), tagged with the resource; none
         * unless set ({@code @EnableSchedulerLockFencing} sets the context's {@code MeterRegistry}).
         */
        public Builder metrics(FencingMetrics metrics) {
            if (metrics == null) {
                throw new FencingConfigurationException("FencingLockProvider metrics must not be null: leave them "
                        + "unset for none");
            }
            this.metrics = metrics;
            return this;
        }

        /**
         * Where each job's wait for its leases is observed: {@code fencing.acquire}, tagged with the resource's family
         * and the outcome, a span in the job's trace; none unless set ({@code @EnableSchedulerLockFencing} sets the
         * context's {@code ObservationRegistry}).
         */
        public Builder observations(ObservationRegistry observations) {
            if (observations == null) {
                throw new FencingConfigurationException("FencingLockProvider observations must not be null: leave "
                        + "them unset for none");
            }
            this.observations = observations;
            return this;
        }

        /** The provider. */
        public FencingLockProvider build() {
            return new FencingLockProvider(this);
        }
    }
}

package dev.fencing.integration;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.AcquisitionCounters;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.metrics.ResourceFamilies;
import dev.fencing.signing.SigningTokenIssuer;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.integration.support.locks.ExpirableLockRegistry;

import java.math.BigInteger;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * A Spring Integration {@code LockRegistry} backed by any {@link TokenIssuer}: {@link #obtain} returns the
 * {@link FencedLock} of a key (one per key in this registry), whose holder has the lease's fencing token bound, so
 * code written against {@code LockRegistry}, {@code LockRegistryLeaderInitiator} included, gets fenced writes. The
 * issuer resource of a key is the registry's prefix followed by the key's text.
 *
 * <p>Keys must have a stable text: a {@link String}, an integral number ({@link Integer}, {@link Long},
 * {@link Short}, {@link Byte}, {@link BigInteger}), a {@link UUID} or an enum constant (its name); any other key is
 * refused with an {@link IllegalArgumentException}, as is a key whose resource a fencing token cannot carry. As a
 * Spring bean it asks the issuer's lock service at startup ({@link #probe()}), so a wrong address fails the start,
 * and it signs like {@code @Fenced(acquire = true)}: with the context's {@link TokenSigner} bean when the issuer does
 * not sign; a {@link TokenVerifier} bean with nothing to sign fails the start, since every write under its locks would
 * be refused as forged. A registry that is not a bean acquires from its issuer as given.
 *
 * <p>Its locks are counted as {@code @Fenced(acquire = true)} methods' are, by resource family (the resource's part
 * before its first {@code ':'}, see {@link ResourceFamilies}): {@code fencing.acquisitions} for each lock
 * taken from the issuer, and for each failure thrown to the caller (a lock not free, {@code false} from
 * {@code tryLock}, is no failure); {@code fencing.leases.unchecked} for each lock given back while no check presented
 * its token. As a bean it counts in the context's {@code MeterRegistry}, when there is one. The blocking waits of
 * {@code lock()} and {@code lockInterruptibly()} are observed as {@code fencing.acquire}, in the context's
 * {@code ObservationRegistry} or the one {@linkplain #observations(ObservationRegistry) given}.
 */
public final class FencedLockRegistry implements ExpirableLockRegistry<FencedLock>, InitializingBean, BeanFactoryAware {

    /** Set once, by the constructor or, for a bean, {@link #setBeanFactory}, before any lock is obtained. */
    private volatile TokenIssuer issuer;
    private final String resourcePrefix;
    private final ConcurrentMap<String, FencedLock> locks = new ConcurrentHashMap<>();
    /** The counters given to the constructor, or {@code null}: then the context's, found on first use. */
    private final FencingMetrics givenMetrics;
    /** Where a bean finds its {@code MeterRegistry}; {@code null} outside a context. */
    private volatile ObjectProvider<MeterRegistry> meterRegistry;
    private volatile ResourceFamilies<AcquisitionCounters> counters;
    private volatile boolean reportUnchecked = true;
    /** The registry given by {@link #observations(ObservationRegistry)}, or the context's found on first use. */
    private volatile ObservationRegistry observations;
    private volatile ObjectProvider<ObservationRegistry> observationRegistry;

    /** A registry whose resources are the keys' texts. */
    public FencedLockRegistry(TokenIssuer issuer) {
        this(issuer, "");
    }

    /**
     * @param issuer         where leases and tokens come from
     * @param resourcePrefix put before every key's text to form the issuer resource (and the token's resource),
     *                       e.g. {@code "leader:"}; may be empty
     * @throws FencingConfigurationException when the issuer is missing or no token could carry the prefix
     */
    public FencedLockRegistry(TokenIssuer issuer, String resourcePrefix) {
        this(issuer, resourcePrefix, null);
    }

    /**
     * @param issuer         where leases and tokens come from
     * @param resourcePrefix put before every key's text to form the issuer resource; may be empty
     * @param metrics        where its locks are counted ({@link FencingMetrics#noop()} for nowhere); {@code null}
     *                       for the context's {@code MeterRegistry} as a bean, nowhere otherwise
     * @throws FencingConfigurationException when the issuer is missing or no token could carry the prefix
     */
    public FencedLockRegistry(TokenIssuer issuer, String resourcePrefix, FencingMetrics metrics) {
        if (issuer == null) {
            throw new FencingConfigurationException("FencedLockRegistry needs a TokenIssuer, got null");
        }
        if (resourcePrefix == null) {
            throw new FencingConfigurationException("FencedLockRegistry resourcePrefix must not be null (use \"\")");
        }
        try {
            TokenIssuer.checkAcquire(resourcePrefix + "k", Duration.ZERO);
        } catch (IllegalArgumentException e) {
            throw new FencingConfigurationException("FencedLockRegistry resourcePrefix '" + resourcePrefix
                    + "' cannot start a resource: " + e.getMessage(), e);
        }
        this.issuer = issuer;
        this.resourcePrefix = resourcePrefix;
        this.givenMetrics = metrics;
    }

    /**
     * The lock for {@code key}: the same instance for equal keys until {@link #expireUnusedOlderThan} removes it.
     *
     * @throws IllegalArgumentException when the key has no stable text or its resource cannot be locked
     */
    @Override
    public FencedLock obtain(Object key) {
        String resource = resourcePrefix + text(key);
        FencedLock lock = locks.get(resource);
        if (lock != null) {
            return lock;
        }
        try {
            TokenIssuer.checkAcquire(resource, Duration.ZERO);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("Lock key '" + key + "' cannot be locked: " + e.getMessage(), e);
        }
        return locks.computeIfAbsent(resource,
                r -> new FencedLock(r, issuer, counters().of(r), this::reportsUnchecked, this::observations));
    }

    /** Forgets the locks no thread holds that were last locked or unlocked more than {@code age} ms ago. */
    @Override
    public void expireUnusedOlderThan(long age) {
        long before = System.nanoTime() - Duration.ofMillis(age).toNanos();
        locks.values().removeIf(lock -> lock.isUnusedSince(before));
    }

    /**
     * Asks the issuer's lock service whether it can grant locks now ({@link TokenIssuer#probe()}).
     *
     * @throws FencingConfigurationException naming this registry and the issuer's reason
     */
    public void probe() {
        try {
            issuer.probe();
        } catch (RuntimeException e) {
            throw new FencingConfigurationException("FencedLockRegistry cannot reach its lock service ("
                    + issuer.getClass().getSimpleName() + "): " + e.getMessage(), e);
        }
    }

    /**
     * As a Spring bean: acquires through a {@link SigningTokenIssuer} with the context's {@link TokenSigner} bean,
     * when there is one and the issuer does not sign already.
     *
     * @throws FencingConfigurationException when the context verifies tokens (a {@link TokenVerifier} bean) but
     *                                       nothing would sign this registry's
     */
    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        issuer = SigningTokenIssuer.forAcquirer("FencedLockRegistry (prefix '" + resourcePrefix + "')", issuer,
                beanFactory.getBeanProvider(TokenSigner.class).getIfAvailable(),
                beanFactory.getBeanProvider(TokenVerifier.class).getIfAvailable() != null);
        meterRegistry = beanFactory.getBeanProvider(MeterRegistry.class);
        observationRegistry = beanFactory.getBeanProvider(ObservationRegistry.class);
    }

    /**
     * Where the blocking waits of this registry's locks ({@link FencedLock#lock()},
     * {@link FencedLock#lockInterruptibly()}) are observed, as {@code fencing.acquire} under their resource's family;
     * as a bean, the context's {@code ObservationRegistry} unless set. {@code tryLock} is not observed: it polls, as a
     * standby leader candidate does on every heartbeat.
     *
     * @return this registry
     */
    public FencedLockRegistry observations(ObservationRegistry observations) {
        this.observations = observations == null ? ObservationRegistry.NOOP : observations;
        return this;
    }

    /** The registry waits are observed in: the given one, else the context's, else none. */
    ObservationRegistry observations() {
        ObservationRegistry found = observations;
        if (found == null) {
            ObjectProvider<ObservationRegistry> provider = observationRegistry;
            found = provider == null ? null : provider.getIfUnique();
            observations = found = found == null ? ObservationRegistry.NOOP : found;
        }
        return found;
    }

    /**
     * Whether a holding given back with its token unchecked is reported ({@code fencing.leases.unchecked} and a
     * WARNING); {@code true} unless set. Turn it off for locks that are often held with nothing to write, such as a
     * leader election's role whose leader may be idle for a whole term; the locks are still counted in
     * {@code fencing.acquisitions}.
     *
     * @return this registry
     */
    public FencedLockRegistry reportUnchecked(boolean report) {
        this.reportUnchecked = report;
        return this;
    }

    boolean reportsUnchecked() {
        return reportUnchecked;
    }

    /** The counters of this registry's locks: the given ones, else the context's registry's, else none. */
    private ResourceFamilies<AcquisitionCounters> counters() {
        ResourceFamilies<AcquisitionCounters> found = counters;
        if (found == null) {
            synchronized (this) {
                found = counters;
                if (found == null) {
                    FencingMetrics metrics = givenMetrics;
                    if (metrics == null) {
                        MeterRegistry meters = meterRegistry == null ? null : meterRegistry.getIfAvailable();
                        metrics = meters == null ? FencingMetrics.noop() : new FencingMetrics(meters);
                    }
                    found = new ResourceFamilies<>(ResourceFamilies.MAX_TAGS, metrics::acquisitions);
                    counters = found;
                }
            }
        }
        return found;
    }

    /**
     * Probes the issuer when the registry is a Spring bean, so a misconfigured issuer fails the startup; so do
     * several {@code MeterRegistry} beans, none of them primary, when the registry was given no metrics of its own
     * (its locks would be counted nowhere).
     */
    @Override
    public void afterPropertiesSet() {
        if (givenMetrics == null && meterRegistry != null) {
            try {
                meterRegistry.getIfAvailable();
            } catch (NoUniqueBeanDefinitionException e) {
                throw new FencingConfigurationException("FencedLockRegistry (prefix '" + resourcePrefix + "') finds "
                        + e.getNumberOfBeansFound() + " MeterRegistry beans " + e.getBeanNamesFound() + " and none "
                        + "of them primary, so its locks would be counted in none: mark the one to count in "
                        + "@Primary, or give the registry its own (new FencedLockRegistry(issuer, prefix, "
                        + "new FencingMetrics(registry)))", e);
            }
        }
        probe();
    }

    /** The prefix of every resource of this registry. */
    public String resourcePrefix() {
        return resourcePrefix;
    }

    @Override
    public String toString() {
        return "FencedLockRegistry{issuer=" + issuer.getClass().getSimpleName() + ", prefix='" + resourcePrefix + "'}";
    }

    private static String text(Object key) {
        Objects.requireNonNull(key, "lock key");
        if (key instanceof String s) {
            return s;
        }
        if (key instanceof Integer || key instanceof Long || key instanceof Short || key instanceof Byte
                || key instanceof BigInteger || key instanceof UUID) {
            return key.toString();
        }
        if (key instanceof Enum<?> e) {
            return e.name();
        }
        throw new IllegalArgumentException("Lock key of type " + key.getClass().getName() + " has no stable text to "
                + "name a resource: use a String, an integral number, a UUID or an enum constant");
    }
}

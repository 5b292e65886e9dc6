package dev.fencing.shedlock;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.signing.SigningTokenIssuer;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.metrics.FencingMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.ExtendedLockConfigurationExtractor;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Wraps each ShedLock {@link LockProvider} bean in a {@link FencingLockProvider} as it is created, and checks at the
 * end of startup that the wrapping happened and that every {@code @SchedulerLock} name resolves to resources a
 * token can carry (mapped ones only, when configured so). Registered by {@link EnableSchedulerLockFencing}.
 */
final class LockProviderFencer implements BeanPostProcessor, BeanFactoryAware, SmartInitializingSingleton {

    private final String[] mappings;
    private final boolean mappedOnly;
    private final String acquireTimeout;
    private ConfigurableListableBeanFactory beanFactory;
    private final List<FencingLockProvider> wrapped = new ArrayList<>();

    LockProviderFencer(String[] mappings, boolean mappedOnly, String acquireTimeout) {
        this.mappings = mappings;
        this.mappedOnly = mappedOnly;
        this.acquireTimeout = acquireTimeout;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = (ConfigurableListableBeanFactory) beanFactory;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
        if (!(bean instanceof LockProvider provider) || bean instanceof FencingLockProvider) {
            return bean;
        }
        TokenIssuer issuer = signing(issuer(beanName), beanName);
        FencingLockProvider.Builder builder = FencingLockProvider.builder(provider, issuer)
                .mappedOnly(mappedOnly).acquireTimeout(timeout());
        MeterRegistry meters = beanFactory.getBeanProvider(MeterRegistry.class).getIfAvailable();
        if (meters != null) {
            builder.metrics(new FencingMetrics(meters));
        }
        ObservationRegistry observations = beanFactory.getBeanProvider(ObservationRegistry.class).getIfUnique();
        if (observations != null) {
            builder.observations(observations);
        }
        for (String mapping : mappings) {
            addMapping(builder, beanFactory.resolveEmbeddedValue(mapping));
        }
        FencingLockProvider fenced = builder.build();
        LOG.log(System.Logger.Level.INFO, () -> "@EnableSchedulerLockFencing: ShedLock LockProvider bean '" + beanName
                + "' fences its jobs with tokens from " + issuer.getClass().getSimpleName() + " "
                + issuer.describe() + "; " + (fenced.mappings().isEmpty()
                ? "no lock name mapped: each job is fenced under its lock name" : "lock names mapped to resources: "
                + fenced.mappings()) + (mappedOnly ? ", unmapped names refused" : ""));
        synchronized (wrapped) {
            wrapped.add(fenced);
        }
        return fenced;
    }

    private TokenIssuer issuer(String lockProviderBean) {
        try {
            return beanFactory.getBean(TokenIssuer.class);
        } catch (NoUniqueBeanDefinitionException e) {
            throw new FencingConfigurationException("@EnableSchedulerLockFencing wraps LockProvider bean '"
                    + lockProviderBean + "' with the TokenIssuer bean, but there are several: " + e.getMessage()
                    + "; mark one @Primary"); // no cause: Boot's analyzer of the cause would show its text, not this
        } catch (NoSuchBeanDefinitionException e) {
            throw new FencingConfigurationException("@EnableSchedulerLockFencing wraps LockProvider bean '"
                    + lockProviderBean + "' but the context has no TokenIssuer bean: declare one (ZooKeeper, etcd or "
                    + "JdbcTokenIssuer; the tokens of ShedLock jobs come from it), or with the Spring Boot starter set "
                    + "fencing.issuer.type (jdbc, zookeeper or etcd)");
        }
    }

    /**
     * {@code issuer} signing with the context's {@link TokenSigner} bean, as {@code @Fenced(acquire = true)} does;
     * fails when a {@link TokenVerifier} bean would refuse every job's unsigned token and nothing signs.
     */
    private TokenIssuer signing(TokenIssuer issuer, String lockProviderBean) {
        return SigningTokenIssuer.forAcquirer("@EnableSchedulerLockFencing, wrapping LockProvider bean '"
                        + lockProviderBean + "' for @SchedulerLock jobs,", issuer,
                beanFactory.getBeanProvider(TokenSigner.class).getIfAvailable(),
                beanFactory.getBeanProvider(TokenVerifier.class).getIfAvailable() != null);
    }

    private Duration timeout() {
        String text = beanFactory.resolveEmbeddedValue(acquireTimeout);
        try {
            return Duration.parse(text);
        } catch (DateTimeParseException e) {
            throw new FencingConfigurationException("@EnableSchedulerLockFencing(acquireTimeout = \"" + text
                    + "\") is not a java.time.Duration such as PT5S", e);
        }
    }

    private static void addMapping(FencingLockProvider.Builder builder, String mapping) {
        String[] resources = resourcesOf(mapping);
        builder.resources(mapping.substring(0, mapping.indexOf('=')).strip(), resources);
    }

    /** The resources of {@code lockName=resource[,resource...]}, stripped. */
    private static String[] resourcesOf(String mapping) {
        int eq = mapping == null ? -1 : mapping.indexOf('=');
        if (eq <= 0 || eq == mapping.length() - 1 || mapping.indexOf('=', eq + 1) >= 0 || mapping.indexOf(';') >= 0) {
            throw new FencingConfigurationException("@EnableSchedulerLockFencing(resources = \"" + mapping
                    + "\") is not lockName=resource[,resource...] (one mapping per array element: resources = "
                    + "{\"job-a=res1\", \"job-b=res2,res3\"})");
        }
        String[] resources = mapping.substring(eq + 1).split(",");
        for (int i = 0; i < resources.length; i++) {
            resources[i] = resources[i].strip();
        }
        return resources;
    }

    @Override
    public void afterSingletonsInstantiated() {
        if (beanFactory.getBeanNamesForType(TokenIssuer.class).length == 0) {
            throw new FencingConfigurationException("@EnableSchedulerLockFencing needs a TokenIssuer bean: "
                    + "the tokens of ShedLock jobs come from it (ZooKeeper, etcd or JdbcTokenIssuer)");
        }
        Set<String> unwrapped = new TreeSet<>();
        beanFactory.getBeansOfType(LockProvider.class, false, false).forEach((name, bean) -> {
            if (!(bean instanceof FencingLockProvider)) {
                unwrapped.add(name);
            }
        });
        if (!unwrapped.isEmpty()) {
            throw new FencingConfigurationException("@EnableSchedulerLockFencing did not wrap the ShedLock "
                    + "LockProvider bean(s) " + unwrapped + ": they were created before its post-processor could see "
                    + "them (a BeanPostProcessor or BeanFactoryPostProcessor that injects a LockProvider makes Spring "
                    + "create it that early, which Spring logs at INFO as 'not eligible for getting processed by all "
                    + "BeanPostProcessors'), so the jobs they lock would run without a token and each fenced write "
                    + "be refused as missing. Inject the LockProvider there lazily (@Lazy, or an ObjectProvider), or "
                    + "return a FencingLockProvider from the bean method");
        }
        List<FencingLockProvider> providers;
        synchronized (wrapped) {
            providers = List.copyOf(wrapped);
        }
        if (providers.isEmpty()) {
            throw new FencingConfigurationException("@EnableSchedulerLockFencing found no ShedLock LockProvider bean "
                    + "to fence: declare one (@Bean LockProvider lockProvider(...)) in this context");
        }
        Set<String> lockNames = schedulerLockNames();
        if (!schedulerLockMethods.isEmpty()
                && beanFactory.getBeanNamesForType(ExtendedLockConfigurationExtractor.class).length == 0) {
            throw new FencingConfigurationException("@EnableSchedulerLockFencing fences ShedLock's locks, but ShedLock "
                    + "does not lock the @SchedulerLock methods " + schedulerLockMethods + ": @EnableSchedulerLock is "
                    + "missing, so every instance runs them at once and no run takes a lock or a token (each fenced "
                    + "write is refused as missing). Add @EnableSchedulerLock(defaultLockAtMostFor = \"...\") to a "
                    + "@Configuration class");
        }
        Set<String> unmapped = new TreeSet<>();
        for (String name : lockNames) {
            for (FencingLockProvider provider : providers) {
                try {
                    provider.resourcesFor(name);
                } catch (FencingConfigurationException | IllegalArgumentException e) {
                    unmapped.add("'" + name + "' (" + e.getMessage() + ")");
                }
            }
        }
        if (!unmapped.isEmpty()) {
            throw new FencingConfigurationException("@SchedulerLock names that cannot be fenced: " + unmapped);
        }
        for (String warning : mappingWarnings()) {
            LOG.log(System.Logger.Level.WARNING, warning);
        }
    }

    private static final System.Logger LOG = System.getLogger(LockProviderFencer.class.getName());

    /**
     * What the mappings name that this context's {@code @Fenced} methods do not check as a job's token can: a
     * resource no method declares (a misspelt name, every run then refused as missing), or one only keyed methods
     * check ({@code @Fenced(key = ...)}: they look for a token of {@code resource:<key>}, which a job's lock on
     * {@code resource} is not); a mapping's lock name that no {@code @SchedulerLock} method uses (a misspelt name,
     * the job then fenced under its own name), and, unless only mapped names are allowed, an unmapped
     * {@code @SchedulerLock} name that no method declares as a resource. A mapping to one entity of a keyed resource
     * ({@code resource:<key>}) is what keyed methods check. Warnings, not failures: the job's writes may be checked in
     * another service, which gets the token over HTTP or a message, and a lock may be taken through ShedLock's
     * {@code LockingTaskExecutor}. Nothing about resources when no bean of this context declares a {@code @Fenced}
     * method.
     */
    List<String> mappingWarnings() {
        Set<String> unkeyed = new TreeSet<>();
        Set<String> keyed = new TreeSet<>();
        fencedResources(unkeyed, keyed);
        Set<String> declared = new TreeSet<>(unkeyed);
        declared.addAll(keyed);
        Set<String> lockNames = schedulerLockNames();
        Set<String> mapped = new TreeSet<>();
        List<String> warnings = new ArrayList<>();
        for (String mapping : mappings) {
            String resolved = beanFactory.resolveEmbeddedValue(mapping);
            String lockName = resolved.substring(0, resolved.indexOf('=')).strip();
            mapped.add(lockName);
            if (!lockNames.isEmpty() && !lockNames.contains(lockName)) {
                warnings.add("@EnableSchedulerLockFencing(resources = \"" + resolved + "\"): no @SchedulerLock method "
                        + "uses lock name '" + lockName + "' (their names: " + lockNames + "): a misspelt name "
                        + "leaves the job unmapped; fine for a lock taken through ShedLock's LockingTaskExecutor");
            }
            if (declared.isEmpty()) {
                continue;
            }
            for (String name : resourcesOf(resolved)) { // parsed when the provider was wrapped: it fails there first
                if (unkeyed.contains(name) || keyedEntity(name, keyed)) {
                    continue;
                }
                if (keyed.contains(name)) {
                    warnings.add("@EnableSchedulerLockFencing(resources = \"" + resolved + "\"): resource '" + name
                            + "' is checked only with a key here (@Fenced(key = ...)), which looks for a token of '"
                            + name + ":<key>': the job's lock on '" + name + "' covers none of them; map the job to "
                            + "the one entity it writes ('" + name + ":<key>'), fence it with an unkeyed @Fenced "
                            + "method, or take a lock per entity in the job");
                } else {
                    warnings.add("@EnableSchedulerLockFencing(resources = \"" + resolved + "\"): no @Fenced method "
                            + "of this application declares resource '" + name + "' (declared: " + declared
                            + "): a misspelt name leaves every run's writes refused as missing; fine if the job's "
                            + "writes are checked in another service");
                }
            }
        }
        if (!mappedOnly && !declared.isEmpty()) {
            for (String lockName : lockNames) {
                if (!mapped.contains(lockName) && !unkeyed.contains(lockName) && !keyedEntity(lockName, keyed)) {
                    warnings.add("@SchedulerLock(name = \"" + lockName + "\") has no mapping, so its job is fenced "
                            + "under its lock name, which no @Fenced method of this application declares as a "
                            + "resource (declared: " + declared + "): map it to the resource its job writes "
                            + "(@EnableSchedulerLockFencing(resources = \"" + lockName + "=<resource>\")); fine if "
                            + "the job's writes are checked in another service");
                }
            }
        }
        return warnings;
    }

    /** Whether {@code name} is one entity ({@code resource:<key>}) of a resource that keyed methods check. */
    private static boolean keyedEntity(String name, Set<String> keyed) {
        for (int colon = name.indexOf(':'); colon > 0; colon = name.indexOf(':', colon + 1)) {
            if (keyed.contains(name.substring(0, colon))) {
                return true;
            }
        }
        return false;
    }

    /** The resources this context's beans declare with {@code @Fenced}: those checked without a key, and with one. */
    private void fencedResources(Set<String> unkeyed, Set<String> keyed) {
        for (String beanName : beanFactory.getBeanDefinitionNames()) {
            Class<?> type = beanFactory.getType(beanName, false);
            if (type == null) {
                continue;
            }
            Class<?> user = ClassUtils.getUserClass(type);
            Fenced onType = AnnotatedElementUtils.findMergedAnnotation(user, Fenced.class);
            if (onType != null) {
                (onType.key().isEmpty() ? unkeyed : keyed).add(onType.resource());
            }
            ReflectionUtils.doWithMethods(user, method -> {
                Fenced fenced = AnnotatedElementUtils.findMergedAnnotation(method, Fenced.class);
                if (fenced != null && !fenced.acquire()) {
                    (fenced.key().isEmpty() ? unkeyed : keyed).add(fenced.resource());
                }
            });
        }
    }

    /** {@code Type.method} of every {@code @SchedulerLock} bean method, filled by {@link #schedulerLockNames()}. */
    private final Set<String> schedulerLockMethods = new TreeSet<>();

    /**
     * The names of every {@code @SchedulerLock} on a bean method, placeholders resolved; names with SpEL ({@code #})
     * depend on arguments and are skipped. Records the methods in {@link #schedulerLockMethods}.
     */
    private Set<String> schedulerLockNames() {
        Set<String> names = new TreeSet<>();
        for (String beanName : beanFactory.getBeanDefinitionNames()) {
            Class<?> type = beanFactory.getType(beanName, false);
            if (type == null) {
                continue;
            }
            Class<?> user = ClassUtils.getUserClass(type);
            ReflectionUtils.doWithMethods(user, method -> {
                SchedulerLock lock = AnnotatedElementUtils.findMergedAnnotation(method, SchedulerLock.class);
                if (lock != null) {
                    schedulerLockMethods.add(user.getSimpleName() + "." + method.getName());
                    if (!lock.name().contains("#")) {
                        names.add(beanFactory.resolveEmbeddedValue(lock.name()));
                    }
                }
            });
        }
        return names;
    }
}

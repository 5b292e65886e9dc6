package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.IssuerBase;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.recovery.FenceInventory;
import dev.fencing.signing.SigningTokenIssuer;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.DestructionAwareBeanPostProcessor;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.event.ApplicationEventMulticaster;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.context.support.AbstractApplicationContext;
import org.springframework.context.event.GenericApplicationListenerAdapter;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.Environment;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Wraps every {@link TokenIssuer} bean in an {@link OffsetTokenIssuer} (under a signing issuer, the issuer it signs:
 * the signature must cover the shifted value) with the base of {@code fencing.issuer.offset.*}; once every singleton
 * exists, stores that base in the durable {@link IssuerBase} or checks it against the stored one (and, on the first
 * start, against the fence store's highest max_seen and the highest token of a JDBC lease table on the data source,
 * the previous issuer's when it is not the wrapped one), failing startup on a mismatch. The wrapped issuer's own
 * container callbacks (its startup check after every singleton, its context-refresh listener, its close) are
 * forwarded to it, since the container now sees the wrapper; an issuer bean the context registered as a listener by
 * its declared type (the starter's {@code JdbcTokenIssuer}) is taken off the event multicaster's listener beans, which
 * would otherwise ask the wrapper for a listener and fail the refresh.
 */
final class IssuerOffsetPostProcessor implements DestructionAwareBeanPostProcessor, BeanFactoryAware,
        EnvironmentAware, SmartInitializingSingleton, ApplicationListener<ContextRefreshedEvent> {

    static final String PREFIX = "fencing.issuer.offset";

    private final Map<String, TokenIssuer> wrapped = new ConcurrentHashMap<>();
    /** Per wrapped bean: establish the stored base and check it, once every singleton exists. */
    private final Map<String, Runnable> checks = new ConcurrentHashMap<>();
    private BeanFactory beanFactory;
    private Environment environment;

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
        if (!(bean instanceof TokenIssuer issuer) || bean instanceof OffsetTokenIssuer) {
            return bean;
        }
        if (issuer instanceof SigningTokenIssuer signing) {
            if (signing.delegate() instanceof OffsetTokenIssuer) {
                return bean;
            }
            wrapped.put(beanName, signing.delegate());
            return new SigningTokenIssuer(offset(signing.delegate(), beanName), signing.signer());
        }
        wrapped.put(beanName, issuer);
        return offset(issuer, beanName);
    }

    /**
     * Takes {@code beanName} off the multicaster's listener beans when the issuer is a listener: the multicaster
     * registered it by its declared type before it was created, and now gets the wrapper under that name. This
     * post-processor forwards the events instead ({@link #onApplicationEvent}).
     */
    private void forgetListenerBean(TokenIssuer issuer, String beanName) {
        if (issuer instanceof ApplicationListener<?> && beanFactory.containsBean(
                AbstractApplicationContext.APPLICATION_EVENT_MULTICASTER_BEAN_NAME)) {
            beanFactory.getBean(AbstractApplicationContext.APPLICATION_EVENT_MULTICASTER_BEAN_NAME,
                    ApplicationEventMulticaster.class).removeApplicationListenerBean(beanName);
        }
    }

    private OffsetTokenIssuer offset(TokenIssuer issuer, String beanName) {
        FencingProperties.Offset properties = properties(environment);
        Long base = properties.getBase();
        if (base == null || base <= 0) {
            throw new FencingConfigurationException(PREFIX + ".base must be a positive number above every token the "
                    + "previous issuer issued, was " + base + " (TokenIssuer bean '" + beanName + "')");
        }
        String name = properties.getName();
        if (name != null && !name.strip().equals(name)) {
            // 'zk-2026 ' from a properties file stored a second migration beside 'zk-2026'
            throw new FencingConfigurationException(PREFIX + ".name '" + name + "' has spaces around it: every "
                    + "instance must name the migration alike; remove them");
        }
        try {
            IssuerBase.checkName(name);
        } catch (IllegalArgumentException e) {
            throw new FencingConfigurationException(PREFIX + ".name: " + e.getMessage(), e);
        }
        OffsetTokenIssuer shifted = OffsetTokenIssuer.of(issuer, base);
        forgetListenerBean(issuer, beanName);
        checks.put(beanName, () -> {
            FenceInventory fences = inventory();
            if (environment.getProperty(IssuerCounterCheck.PROPERTY, Boolean.class, true)) {
                // the counter check that would fail startup after the base was stored: run first, so a base it
                // refuses is not stored (a stored base never changes)
                IssuerCounterCheck.check(shifted, fences, new StoredOffsets(beanFactory, environment));
            }
            // before a base is stored, never to change: the bound must suit the offset and the issuer
            if (beanFactory instanceof org.springframework.beans.factory.config.ConfigurableListableBeanFactory beans) {
                MaxAdvanceCheck.check(beans, environment, false);
            } else {
                MaxAdvanceCheck.requireAboveOffset(environment);
            }
            IssuerBase bases = issuerBase(properties);
            if (properties.isCheckFenceStore() && JdbcOffsetParts.PRESENT && bases.stored(name).isEmpty()) {
                // a first start: the old lease table's tokens, presented to the fence store or not, are below it
                JdbcOffsetParts.requireAboveLeaseTable(beanFactory, environment, issuer, name, base);
            }
            OffsetTokenIssuer.establish(issuer, bases, name, base, properties.isCheckFenceStore() ? fences : null);
        });
        return shifted;
    }

    /** The {@code fencing.issuer.offset.*} properties, bound now (defaults where unset). */
    static FencingProperties.Offset properties(Environment environment) {
        return Binder.get(environment).bind(PREFIX, FencingProperties.Offset.class)
                .orElseGet(FencingProperties.Offset::new);
    }

    /** The application's {@link IssuerBase} bean, or a table through fencing-jdbc on its data source. */
    private IssuerBase issuerBase(FencingProperties.Offset properties) {
        IssuerBase own = beanFactory.getBeanProvider(IssuerBase.class).getIfUnique();
        if (own != null) {
            return own;
        }
        IssuerBase jdbc = JdbcOffsetParts.PRESENT ? JdbcOffsetParts.issuerBase(beanFactory, properties.getTable(),
                properties.getInitializeSchema()) : null;
        if (jdbc == null) {
            throw new FencingConfigurationException(PREFIX + ".base is set, but there is nowhere durable to store it: "
                    + "add fencing-jdbc and a DataSource (the table " + properties.getTable() + ", created with "
                    + "classpath:dev/fencing/jdbc/issuer-base-<database>.sql or by " + PREFIX
                    + ".initialize-schema=always), or define an IssuerBase bean");
        }
        return jdbc;
    }

    /** The fence store's listing, for the first start's check; {@code null} when the store offers none. */
    private FenceInventory inventory() {
        return FenceStoreInventory.of(beanFactory);
    }

    @Override
    public boolean requiresDestruction(Object bean) {
        return bean instanceof OffsetTokenIssuer
                || bean instanceof SigningTokenIssuer signing && signing.delegate() instanceof OffsetTokenIssuer;
    }

    @Override
    public void postProcessBeforeDestruction(Object bean, String beanName) throws BeansException {
        TokenIssuer issuer = wrapped.remove(beanName);
        try {
            if (issuer instanceof DisposableBean disposable) {
                disposable.destroy();
            } else if (issuer instanceof AutoCloseable closeable) {
                closeable.close();
            }
        } catch (Exception e) {
            throw new IllegalStateException("Could not close the TokenIssuer bean '" + beanName + "': " + e, e);
        }
    }

    /**
     * Runs the wrapped issuers' own startup checks, then stores or checks each base: after every singleton exists, so
     * that database initialization (spring.sql.init, Flyway) has created the base table. A failure fails startup.
     */
    @Override
    public void afterSingletonsInstantiated() {
        for (TokenIssuer issuer : wrapped.values()) {
            if (issuer instanceof SmartInitializingSingleton singleton) {
                singleton.afterSingletonsInstantiated();
            }
        }
        for (Runnable check : checks.values()) {
            check.run();
        }
        checks.clear();
    }

    @Override
    @SuppressWarnings("unchecked")
    public void onApplicationEvent(ContextRefreshedEvent event) {
        for (TokenIssuer issuer : wrapped.values()) {
            if (issuer instanceof ApplicationListener<?> listener && new GenericApplicationListenerAdapter(listener)
                    .supportsEventType(ResolvableType.forInstance(event))) {
                ((ApplicationListener<ApplicationEvent>) listener).onApplicationEvent(event);
            }
        }
    }
}

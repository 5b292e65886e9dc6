package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.jdbc.TransactionOrigins;
import dev.fencing.store.FenceStore;
import dev.fencing.store.RoutingFenceStore;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.env.Environment;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.EmbeddedDatabaseConnection;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.transaction.PlatformTransactionManager;

import javax.sql.DataSource;

/**
 * The database store and issuer of fencing-jdbc, when it is on the classpath and the application has a
 * {@link DataSource}: a {@link JdbcFenceStore} on the application's transaction manager (unless
 * {@code fencing.store.type=in-memory}), and with {@code fencing.issuer.type=jdbc} a {@link JdbcTokenIssuer}. Each
 * backs off when the application defines its own {@link FenceStore} or {@link TokenIssuer}.
 */
@AutoConfiguration(before = FencingAutoConfiguration.class, afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
        // Boot orders its R2dbcTransactionManagerAutoConfiguration after R2dbcAutoConfiguration by @AutoConfigureOrder
        // only: being after TransactionAutoConfiguration (which that one precedes) without this would pull it ahead
        // of the ConnectionFactory it needs, and a reactive application would have no R2dbcTransactionManager
        "org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration"})
@ConditionalOnClass({JdbcFenceStore.class, EmbeddedDatabaseConnection.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingJdbcAutoConfiguration {

    @Bean
    @ConditionalOnBean(DataSource.class)
    @ConditionalOnMissingBean(FenceStore.class)
    @ConditionalOnFencingType(store = FencingProperties.StoreType.JDBC)
    @DependsOnDatabaseInitialization
    JdbcFenceStore fenceStore(DataSource dataSource, ObjectProvider<PlatformTransactionManager> transactionManager,
                              FencingProperties properties, Environment environment) {
        FencingProperties.JdbcStore jdbc = properties.getStore().getJdbc();
        JdbcFenceStore.Builder builder = JdbcFenceStore.builder(dataSource).table(jdbc.getTable())
                .lockTimeout(jdbc.getLockTimeout()).checkAtCommit(jdbc.isCheckAtCommit())
                // compacted by this instance (or the others, with the same properties) from its first batch on
                .compacted(environment.getProperty("fencing.compaction.enabled", Boolean.class, false))
                .createTableIfMissing(createsTable(jdbc.getInitializeSchema(), dataSource));
        if (jdbc.getMaxAdvance() != null) {
            if (jdbc.getMaxAdvance() < 1) {
                // the builder's own message names its Java constant, which no property can spell
                throw new FencingConfigurationException("fencing.store.jdbc.max-advance must be at least 1, was "
                        + jdbc.getMaxAdvance() + "; leave it unset for no bound on one advance");
            }
            builder.maxAdvance(jdbc.getMaxAdvance());
        }
        PlatformTransactionManager manager = transactionManager.getIfUnique();
        if (manager != null) {
            builder.transactionManager(manager);
        } else if (transactionManager.stream().limit(2).count() > 1) {
            // Spring itself refuses an unqualified @Transactional then; the store still needs one to check in
            LogFactory.getLog(FencingJdbcAutoConfiguration.class).info("fencing: several transaction managers and "
                    + "none of them primary, so the starter's JdbcFenceStore checks in transactions of a "
                    + "DataSourceTransactionManager of its own on the primary DataSource, joining a transaction "
                    + "that already holds a connection of that DataSource. To name the manager, mark it @Primary "
                    + "or define the store: JdbcFenceStore.builder(dataSource).transactionManager(..)");
        }
        return builder.build();
    }

    /**
     * Listens to every transaction manager bean as it is created ({@link TransactionOrigins}), so that a
     * {@link JdbcFenceStore}, the starter's, the application's or one a routing store holds, refuses a fenced call
     * whose innermost transaction is another data source's nested inside one of its own.
     */
    @Bean
    static BeanPostProcessor fencingTransactionOrigins() {
        return TransactionOrigins.beanPostProcessor();
    }

    /**
     * Once every singleton exists: fails startup when a {@link JdbcFenceStore} checking at commit, the starter's or
     * the application's own (also one a {@link RoutingFenceStore} bean routes to), would refuse every fenced call
     * under the application's transaction manager (JPA's, Hibernate's), instead of answering each call as a store
     * failure.
     */
    @Bean
    static SmartInitializingSingleton fencingCheckAtCommitTransactionCheck(ObjectProvider<FenceStore> stores,
            ObjectProvider<PlatformTransactionManager> transactionManagers) {
        return () -> stores.orderedStream().flatMap(FencingJdbcAutoConfiguration::jdbcStores).distinct()
                .forEach(store -> {
                    String problem = store.atCommitProblem(transactionManagers.getIfUnique());
                    if (problem != null) {
                        throw new FencingConfigurationException(problem);
                    }
                });
    }

    /**
     * Once every singleton exists: warns of a DataSource bean or jOOQ {@code DSLContext} through which a fenced write
     * would take a connection apart from the check's transaction ({@link WriteConnectionsCheck}).
     */
    @Bean
    static SmartInitializingSingleton fencingWriteConnectionsCheck(ListableBeanFactory beans,
            ObjectProvider<FenceStore> stores) {
        return () -> WriteConnectionsCheck.warn(beans, stores.orderedStream()
                .flatMap(FencingJdbcAutoConfiguration::jdbcStores).distinct().toList());
    }

    /** The JDBC stores {@code store} is or routes to (a {@link RoutingFenceStore}'s, at any depth). */
    private static Stream<JdbcFenceStore> jdbcStores(FenceStore store) {
        if (store instanceof JdbcFenceStore jdbc) {
            return Stream.of(jdbc);
        }
        if (store instanceof RoutingFenceStore routing) {
            return routing.stores().stream().flatMap(FencingJdbcAutoConfiguration::jdbcStores);
        }
        return Stream.empty();
    }

    /**
     * Once every singleton exists: warns when {@code fencing.store.jdbc.*} properties are set but the application's
     * fence store is a bean of its own, which the starter neither builds nor configures, so they have no effect (a
     * {@code check-at-commit=true} that would silently check before the body instead).
     */
    @Bean
    static SmartInitializingSingleton fencingIgnoredStorePropertiesWarning(ConfigurableListableBeanFactory beanFactory,
                                                                           Environment environment) {
        return () -> {
            List<String> set = STORE_PROPERTIES.stream().filter(environment::containsProperty).toList();
            String[] stores = beanFactory.getBeanNamesForType(FenceStore.class, true, false);
            if (set.isEmpty() || stores.length == 0
                    || Arrays.stream(stores).anyMatch(name -> starters(beanFactory, name))) {
                return;
            }
            LogFactory.getLog(FencingJdbcAutoConfiguration.class).warn(String.join(", ", set) + " set, but the "
                    + "application defines its own fence store (" + String.join(", ", stores) + "), which the "
                    + "starter does not build: these properties have no effect. Set them on your store's builder "
                    + "(JdbcFenceStore.builder(..).checkAtCommit(..), .table(..), .lockTimeout(..), .maxAdvance(..)), "
                    + "or remove your bean to let the starter build the store from them");
        };
    }

    /** The {@code fencing.store.jdbc.*} properties the starter's store is built from. */
    static final List<String> STORE_PROPERTIES = List.of("fencing.store.jdbc.table",
            "fencing.store.jdbc.lock-timeout", "fencing.store.jdbc.check-at-commit", "fencing.store.jdbc.max-advance",
            "fencing.store.jdbc.initialize-schema");

    /** Whether bean {@code name} is made by the starter ({@link StarterBeans#madeByStarter}). */
    static boolean starters(ConfigurableListableBeanFactory beanFactory, String name) {
        return StarterBeans.madeByStarter(beanFactory, name);
    }

    @Bean
    @ConditionalOnBean(DataSource.class)
    @ConditionalOnMissingBean(TokenIssuer.class)
    @ConditionalOnFencingType(issuer = FencingProperties.IssuerType.JDBC)
    @DependsOnDatabaseInitialization
    JdbcTokenIssuer tokenIssuer(DataSource dataSource, FencingProperties properties,
                                ObjectProvider<MeterRegistry> registry) {
        FencingProperties.JdbcIssuer jdbc = properties.getIssuer().getJdbc();
        requireLeaseOfASecond(jdbc.getLeaseTime());
        if (properties.getStore().getType() == FencingProperties.StoreType.JDBC) {
            warnOfLeaseWithinLockTimeout(jdbc.getLeaseTime(), properties.getStore().getJdbc().getLockTimeout());
        }
        return JdbcTokenIssuer.builder(dataSource).table(jdbc.getTable()).leaseTime(jdbc.getLeaseTime())
                .createTableIfMissing(createsTable(jdbc.getInitializeSchema(), dataSource))
                .meterRegistry(registry.getIfUnique()).build();
    }

    /**
     * A lease under a second expires inside most calls, so its lock excludes nothing, and it is what a value written
     * without a unit gives ({@code lease-time=30} is 30 ms): a startup failure naming the value.
     */
    static void requireLeaseOfASecond(Duration leaseTime) {
        if (leaseTime != null && leaseTime.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new FencingConfigurationException("fencing.issuer.jdbc.lease-time is " + leaseTime.toMillis()
                    + " ms: a lease that short expires inside most calls, so the lock would exclude nothing (the "
                    + "next holder takes it while this one still writes, and only the fence stops the writes). Give "
                    + "it a second or more, with its unit (a value written without one is in milliseconds): 30s");
        }
    }

    /**
     * A lease no longer than the fence store's lock timeout can run out while its holder's check waits for a fence
     * row another writer holds (a paused holder's, until its lock timeout): the holder becomes a zombie waiting, and
     * its write is refused as stale. Not a failure (the fence still refuses what it must), a warning naming both.
     */
    static void warnOfLeaseWithinLockTimeout(Duration leaseTime, Duration lockTimeout) {
        if (leaseTime != null && lockTimeout != null && leaseTime.compareTo(lockTimeout) <= 0) {
            LogFactory.getLog(FencingJdbcAutoConfiguration.class).warn("fencing.issuer.jdbc.lease-time ("
                    + leaseTime.toMillis() + " ms) is not longer than fencing.store.jdbc.lock-timeout ("
                    + lockTimeout.toMillis() + " ms): a holder whose check waits for a fence row another writer "
                    + "holds can lose its lease while it waits, and its write is then refused as stale. Keep the "
                    + "lease well above the lock timeout (10-30 s against 5 s; operations.md, Three timeouts)");
        }
    }

    /**
     * Whether a missing table is created, as {@code spring.sql.init.mode} decides for Boot's own scripts. The table is
     * created (if missing) when the store or issuer verifies it at the end of startup, so after every database
     * initializer this bean waits for ({@code @DependsOnDatabaseInitialization}: spring.sql.init, Flyway, Liquibase).
     */
    static boolean createsTable(FencingProperties.SchemaInitialization mode, DataSource dataSource) {
        return switch (mode) {
            case ALWAYS -> true;
            case NEVER -> false;
            case EMBEDDED -> EmbeddedDatabaseConnection.isEmbedded(dataSource);
        };
    }
}

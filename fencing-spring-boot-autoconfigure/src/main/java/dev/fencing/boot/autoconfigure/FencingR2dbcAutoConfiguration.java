package dev.fencing.boot.autoconfigure;

import dev.fencing.r2dbc.R2dbcFenceStore;
import dev.fencing.reactive.ReactiveFenceStore;
import io.r2dbc.spi.ConnectionFactory;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;

import java.util.ArrayList;
import java.util.List;

/**
 * The reactive database store of fencing-r2dbc, when it is on the classpath and the application has an R2DBC
 * {@link ConnectionFactory} (Spring Boot's {@code spring.r2dbc.*}): an {@link R2dbcFenceStore} on the fence table
 * {@code fencing.store.r2dbc.table} (unless set, {@code fencing.store.jdbc.table}'s), which checks tokens on the
 * connection of the caller's reactive transaction. It backs off when the application defines its own
 * {@link ReactiveFenceStore}, and with {@code fencing.store.type=in-memory} (then {@link FencingAutoConfiguration}
 * defines an in-memory one).
 */
@AutoConfiguration(before = FencingAutoConfiguration.class,
        afterName = "org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration")
@ConditionalOnClass({R2dbcFenceStore.class, ConnectionFactory.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingR2dbcAutoConfiguration {

    @Bean
    @ConditionalOnBean(ConnectionFactory.class)
    @ConditionalOnMissingBean(ReactiveFenceStore.class)
    @ConditionalOnFencingType(store = FencingProperties.StoreType.JDBC)
    @DependsOnDatabaseInitialization
    R2dbcFenceStore reactiveFenceStore(ConnectionFactory connectionFactory, FencingProperties properties,
                                       Environment environment) {
        FencingProperties.R2dbcStore r2dbc = properties.getStore().getR2dbc();
        // unless set, the JDBC store's table: both stacks then share max_seen
        String table = Binder.get(environment).bind("fencing.store.r2dbc.table", String.class).isBound()
                ? r2dbc.getTable() : properties.getStore().getJdbc().getTable();
        return R2dbcFenceStore.builder(connectionFactory).table(table).lockTimeout(r2dbc.getLockTimeout()).build();
    }

    /**
     * Once every singleton exists, in an application with both of the starter's database stores (blocking methods
     * checked by the JDBC store, reactive ones by the R2DBC store): fails startup when they use different tables, since
     * a resource fenced by a blocking and a reactive method would keep two max_seen, each store accepting a token the
     * other has seen surpassed (a new user's trial wrote a stale token that way). The stores' own tables are read;
     * stores the application defines are its own.
     */
    @Bean
    static SmartInitializingSingleton fencingOneFenceTableCheck(
            org.springframework.beans.factory.config.ConfigurableListableBeanFactory beans) {
        return () -> {
            if (!(StarterBeans.madeByStarter(beans, "reactiveFenceStore")
                    && beans.getBean("reactiveFenceStore") instanceof R2dbcFenceStore reactive)
                    || !JDBC_PRESENT || !StarterBeans.madeByStarter(beans, "fenceStore")) {
                return;
            }
            Object jdbcStore = beans.getBean("fenceStore");
            String blocking = JdbcStoreTable.of(jdbcStore);
            if (blocking == null) {
                return;
            }
            String databases = JdbcStoreTable.otherDatabase(jdbcStore, reactive,
                    beans.getBeanProvider(javax.sql.DataSource.class).getIfUnique(),
                    beans.getBeanProvider(ConnectionFactory.class).getIfUnique());
            if (databases != null) {
                throw new dev.fencing.FencingConfigurationException("The starter's JDBC store checks blocking "
                        + "@Fenced methods on " + databases + ": a resource fenced by both kinds of method would keep "
                        + "two max_seen, one per database, and a token refused by one would be accepted by the other. "
                        + "Point spring.datasource.* and spring.r2dbc.* at the one database that holds the fence "
                        + "table; stores that must differ are defined as beans of the application's own");
            }
            if (!blocking.equalsIgnoreCase(reactive.table())) {
                throw new dev.fencing.FencingConfigurationException("The starter's JDBC store checks blocking "
                        + "@Fenced methods in table '" + blocking + "' (fencing.store.jdbc.table) and its R2DBC store "
                        + "reactive ones in table '" + reactive.table() + "' (fencing.store.r2dbc.table): a resource "
                        + "fenced by both kinds of method would keep two max_seen, and a token refused by one table "
                        + "would be accepted by the other. Give both properties the same table (set "
                        + "fencing.store.jdbc.table alone: the R2DBC store's table follows it unless set); stores "
                        + "that must differ are defined as beans of the application's own");
            }
        };
    }

    private static final boolean JDBC_PRESENT = org.springframework.util.ClassUtils.isPresent(
            "dev.fencing.jdbc.JdbcFenceStore", FencingR2dbcAutoConfiguration.class.getClassLoader());

    /** Reads the JDBC store's table and database; loaded only with fencing-jdbc present. */
    private static final class JdbcStoreTable {
        static String of(Object store) {
            return store instanceof dev.fencing.jdbc.JdbcFenceStore jdbc ? jdbc.table() : null;
        }

        /**
         * What tells the two stores' databases apart, or {@code null} when they are one (or it cannot be told: then a
         * warning): another product, or another database or server by a query each connection answers alike for one
         * database (PostgreSQL: the database and the server's start time; MariaDB: the database, host, port and
         * server id).
         */
        static String otherDatabase(Object store, R2dbcFenceStore reactive, javax.sql.DataSource dataSource,
                                    ConnectionFactory connectionFactory) {
            dev.fencing.jdbc.JdbcDialect jdbcDialect = ((dev.fencing.jdbc.JdbcFenceStore) store).dialect();
            if (!jdbcDialect.name().equals(reactive.dialect().name())) {
                return jdbcDialect.name() + " (spring.datasource.*), and its R2DBC store reactive ones on "
                        + reactive.dialect().name() + " (spring.r2dbc.*)";
            }
            if (dataSource == null || connectionFactory == null) {
                return null;
            }
            String identity = jdbcDialect == dev.fencing.jdbc.JdbcDialect.POSTGRESQL
                    ? "SELECT current_database() || '@' || CAST(pg_postmaster_start_time() AS TEXT)"
                    : "SELECT CONCAT(DATABASE(), '@', @@hostname, ':', @@port, '#', @@server_id)";
            try {
                String blocking = new org.springframework.jdbc.core.JdbcTemplate(dataSource)
                        .queryForObject(identity, String.class);
                String reactiveOne = org.springframework.r2dbc.core.DatabaseClient.create(connectionFactory)
                        .sql(identity).map((row, meta) -> row.get(0, String.class)).one()
                        .block(java.time.Duration.ofSeconds(30));
                return java.util.Objects.equals(blocking, reactiveOne) ? null : "the database " + blocking
                        + " (spring.datasource.*), and its R2DBC store reactive ones on " + reactiveOne
                        + " (spring.r2dbc.*)";
            } catch (RuntimeException e) {
                LogFactory.getLog(FencingR2dbcAutoConfiguration.class).warn("fencing: could not tell whether the "
                        + "JDBC and the R2DBC store check in one database (" + e + "); if they do not, a resource "
                        + "fenced by blocking and reactive methods keeps two max_seen");
                return null;
            }
        }
    }

    /**
     * Once every singleton exists: warns when the starter built its store on a connection factory that no
     * {@link R2dbcTransactionManager} bean manages (another factory's manager made Boot's back off, say), since the
     * store refuses every fenced call outside a transaction on its factory. A manager that is not a bean may still
     * serve it, hence a warning, not a failure.
     */
    @Bean
    static SmartInitializingSingleton fencingR2dbcTransactionManagerCheck(ListableBeanFactory beans) {
        return () -> {
            ConnectionFactory store = starterStoresFactory(beans);
            if (store == null || beans.getBeanProvider(R2dbcTransactionManager.class).stream()
                    .anyMatch(manager -> manager.getConnectionFactory() == store)) {
                return;
            }
            LogFactory.getLog(FencingR2dbcAutoConfiguration.class).warn("fencing: no R2dbcTransactionManager bean "
                    + "manages the ConnectionFactory the starter's R2dbcFenceStore checks on (the primary one), so "
                    + "every reactive fenced call will be refused as outside a transaction unless it runs in a "
                    + "transaction of a manager on that factory. Declare one, @Primary if there are several (a "
                    + "transaction manager of your own makes Spring Boot's back off): see docs/stores.md, \"Two "
                    + "connection factories\"");
        };
    }

    /**
     * Once every singleton exists: warns when the application has connection factories besides the one the starter's
     * R2dbcFenceStore checks on, naming them: a fenced method that writes through one of them is checked on the
     * store's database and writes on the other outside its transaction, so a rollback takes max_seen back and leaves
     * that write (a trial kept an older token's write after a newer one's). No failure: a second database the fenced
     * methods never write to is fine.
     */
    @Bean
    static SmartInitializingSingleton fencingR2dbcOtherFactoriesWarning(ListableBeanFactory beans) {
        return () -> {
            ConnectionFactory store = starterStoresFactory(beans);
            if (store == null) {
                return;                                // the application's own store, or none
            }
            List<String> others = new ArrayList<>();
            for (String name : beans.getBeanNamesForType(ConnectionFactory.class, false, false)) {
                if (beans.getBean(name) != store) {
                    others.add("'" + name + "'");
                }
            }
            if (others.isEmpty()) {
                return;
            }
            LogFactory.getLog(FencingR2dbcAutoConfiguration.class).warn("fencing: the starter's R2dbcFenceStore "
                    + "checks on the primary ConnectionFactory; a fenced method that writes through " + String.join(
                    ", ", others) + " is checked there but writes outside the check's transaction: a rollback takes "
                    + "max_seen back and leaves that write, so an older token can write after it. Keep the fenced "
                    + "resources' data in the primary database (docs/reactive.md, \"Two databases\"); nothing to do "
                    + "if no fenced method writes through " + (others.size() == 1 ? "it" : "them"));
        };
    }

    /**
     * The connection factory the starter's R2dbcFenceStore checks on (the unique or primary one), {@code null} when
     * the store is the application's own, or there is none.
     */
    private static ConnectionFactory starterStoresFactory(ListableBeanFactory beans) {
        if (!(beans.containsBean("reactiveFenceStore")
                && beans.getBean("reactiveFenceStore") instanceof R2dbcFenceStore)) {
            return null;
        }
        return beans.getBeanProvider(ConnectionFactory.class).getIfUnique();
    }
}

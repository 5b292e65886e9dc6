package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.IssuerBase;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcIssuerBase;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.recovery.FenceInventory;
import dev.fencing.store.FenceStore;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import javax.sql.DataSource;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;

/**
 * What the issuer offset reads from fencing-jdbc: the base table on the application's data source (created when
 * {@code fencing.issuer.offset.initialize-schema} says so), the JDBC fence table's listing and the previous issuer's
 * lease table. Loaded only when fencing-jdbc is on the classpath ({@link #PRESENT}).
 */
final class JdbcOffsetParts {

    static final boolean PRESENT = ClassUtils.isPresent("dev.fencing.jdbc.JdbcIssuerBase",
            JdbcOffsetParts.class.getClassLoader());

    static final String INITIALIZE_SCHEMA = IssuerOffsetPostProcessor.PREFIX + ".initialize-schema";

    /** The starter's lease table property, read for the previous issuer's table on a migration's first start. */
    static final String LEASE_TABLE = "fencing.issuer.jdbc.table";

    private static final boolean EMBEDDED_DETECTABLE = ClassUtils.isPresent(
            "org.springframework.boot.jdbc.EmbeddedDatabaseConnection", JdbcOffsetParts.class.getClassLoader());

    private JdbcOffsetParts() {
    }

    /**
     * The base table on the unique {@link DataSource} bean, created first when {@code initializeSchema} says so (as
     * {@code fencing.store.jdbc.initialize-schema} does for the fence table); {@code null} when there is no
     * DataSource.
     *
     * @throws FencingConfigurationException when the table is missing or wrong, naming
     *                                       {@code fencing.issuer.offset.initialize-schema} when it was not created
     */
    static IssuerBase issuerBase(BeanFactory beanFactory, String table,
                                 FencingProperties.SchemaInitialization initializeSchema) {
        return Jdbc.issuerBase(beanFactory, table, initializeSchema);
    }

    static FenceInventory inventory(FenceStore store) {
        return Jdbc.inventory(store);
    }

    /**
     * On a migration's first start: fails when a JDBC lease table on the unique {@link DataSource} bean
     * ({@code fencing.issuer.jdbc.table}, {@code fencing_lease} by default), other than the wrapped issuer's own,
     * holds a token at or above {@code base}. Such a table is the previous issuer's, and a holder may keep a token up
     * to its highest that no fence store has seen yet: with the new issuer's tokens below it, that holder's late
     * write would pass and the new holders would be refused. Nothing to check without a DataSource or such a table.
     *
     * @throws FencingConfigurationException naming the table, its highest token, the base and the way out
     */
    static void requireAboveLeaseTable(BeanFactory beanFactory, Environment environment, TokenIssuer issuer,
                                       String name, long base) {
        Jdbc.requireAboveLeaseTable(beanFactory, environment, issuer, name, base);
    }

    /**
     * The highest token of the JDBC lease table {@code fencing.issuer.jdbc.table} names on the unique
     * {@link DataSource} bean, when the application's issuer is not the one on that table: what a move to a
     * one-sequence issuer must count past. Empty without a DataSource, table or row.
     */
    static OptionalLong oldLeaseTokens(BeanFactory beanFactory, Environment environment, TokenIssuer issuer) {
        return Jdbc.oldLeaseTokens(beanFactory, environment, issuer);
    }

    /**
     * The bases stored in {@code table} on the unique {@link DataSource} bean, never creating it: empty when the table
     * does not exist; without a DataSource, none stored.
     */
    static java.util.Optional<Map<String, Long>> storedBasesIfPresent(BeanFactory beanFactory, String table) {
        return Jdbc.storedBases(beanFactory, table);
    }

    /** The code that links against fencing-jdbc. */
    private static final class Jdbc {

        static IssuerBase issuerBase(BeanFactory beanFactory, String table,
                                     FencingProperties.SchemaInitialization initializeSchema) {
            DataSource dataSource = beanFactory.getBeanProvider(DataSource.class).getIfUnique();
            if (dataSource == null) {
                return null;
            }
            boolean create = createsTable(initializeSchema, dataSource);
            try {
                return new JdbcIssuerBase(dataSource, table, create);
            } catch (FencingConfigurationException e) {
                if (create || e.getMessage() == null || !e.getMessage().startsWith("Issuer base table '")) {
                    throw e;
                }
                throw new FencingConfigurationException(e.getMessage() + ". Or let the starter create it when it is "
                        + "missing: " + INITIALIZE_SCHEMA + "=always (it is " + initializeSchema.name()
                        .toLowerCase(Locale.ROOT) + ")", e);
            }
        }

        /** As {@link FencingJdbcAutoConfiguration#createsTable}, without spring-boot-jdbc unless embedded is asked. */
        private static boolean createsTable(FencingProperties.SchemaInitialization mode, DataSource dataSource) {
            if (mode == FencingProperties.SchemaInitialization.EMBEDDED && !EMBEDDED_DETECTABLE) {
                throw new FencingConfigurationException(INITIALIZE_SCHEMA + "=embedded needs spring-boot-jdbc to "
                        + "tell an in-memory database (org.springframework.boot.jdbc.EmbeddedDatabaseConnection is "
                        + "not on the class path); use always or never");
            }
            return FencingJdbcAutoConfiguration.createsTable(mode, dataSource);
        }

        static FenceInventory inventory(FenceStore store) {
            return store instanceof JdbcFenceStore jdbc ? new JdbcFenceAdmin(jdbc) : null;
        }

        /** Whether {@code table} can be read on {@code dataSource} (it exists); its rows are not read. */
        private static boolean tableReadable(DataSource dataSource, String table) {
            try {
                new org.springframework.jdbc.core.JdbcTemplate(dataSource).queryForList("SELECT 1 FROM " + table
                        + " WHERE 1 = 0");
                return true;
            } catch (org.springframework.dao.DataAccessException missing) {
                return false;
            }
        }

        static OptionalLong oldLeaseTokens(BeanFactory beanFactory, Environment environment, TokenIssuer issuer) {
            DataSource dataSource = beanFactory.getBeanProvider(DataSource.class).getIfUnique();
            String table = environment.getProperty(LEASE_TABLE, JdbcTokenIssuer.DEFAULT_TABLE);
            if (dataSource == null || issuer instanceof JdbcTokenIssuer own && own.table().equalsIgnoreCase(table)) {
                return OptionalLong.empty();
            }
            return JdbcTokenIssuer.highestInTable(dataSource, table);
        }

        static void requireAboveLeaseTable(BeanFactory beanFactory, Environment environment, TokenIssuer issuer,
                                           String name, long base) {
            String table = environment.getProperty(LEASE_TABLE, JdbcTokenIssuer.DEFAULT_TABLE);
            OptionalLong highest = oldLeaseTokens(beanFactory, environment, issuer);
            DataSource dataSource = beanFactory.getBeanProvider(DataSource.class).getIfUnique();
            if (highest.isEmpty() && dataSource != null && !(issuer instanceof JdbcTokenIssuer)
                    && !tableReadable(dataSource, table)) {
                // the check cannot see a lease table of another name: a trial's base of 100 was stored below its
                // old holders' 1000, with the default name left on an old table called otherwise
                LogFactory.getLog(JdbcOffsetParts.class).warn("Issuer offset '" + name + "': no JDBC lease table '"
                        + table + "' on the application's DataSource to check base " + base + " against before "
                        + "storing it. If the previous issuer was the JDBC lease on a table of another name, set "
                        + LEASE_TABLE + " to it (on every instance): startup then fails while the base is not above "
                        + "its highest token. Nothing to do after a move from ZooKeeper or etcd");
            }
            if (highest.isPresent() && highest.getAsLong() >= base) {
                throw new FencingConfigurationException("Issuer offset '" + name + "': base " + base + " is not "
                        + "above the highest token " + highest.getAsLong() + " of the lease table '" + table
                        + "' on the application's DataSource (" + LEASE_TABLE + "), the previous issuer's: one of "
                        + "its holders may still hold a token up to " + highest.getAsLong() + " that no fence store "
                        + "has seen, whose late write would pass while the new issuer's holders were refused. Choose "
                        + "a base above it, with headroom for the tokens the old issuer issues while the deploy rolls "
                        + "(docs/issuers.md, \"Moving to another issuer\"); nothing was stored. If that table is not "
                        + "the previous issuer's, point " + LEASE_TABLE + " at the one that is, or turn the "
                        + "first-start checks off with " + IssuerOffsetPostProcessor.PREFIX
                        + ".check-fence-store=false");
            }
        }

        static java.util.Optional<Map<String, Long>> storedBases(BeanFactory beanFactory, String table) {
            DataSource dataSource = beanFactory.getBeanProvider(DataSource.class).getIfUnique();
            if (dataSource == null) {
                return java.util.Optional.of(Map.of());
            }
            // no base table: nothing was ever stored in it; a failure to read one is thrown
            return JdbcIssuerBase.storedBasesIfPresent(dataSource, table);
        }
    }
}

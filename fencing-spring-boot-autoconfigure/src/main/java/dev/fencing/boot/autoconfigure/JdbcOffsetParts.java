package dev.fencing.boot.autoconfigure;

import dev.fencing.issuer.IssuerBase;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcIssuerBase;
import dev.fencing.recovery.FenceInventory;
import dev.fencing.store.FenceStore;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.ClassUtils;

import javax.sql.DataSource;

/**
 * What the issuer offset reads from fencing-jdbc: the base table on the application's data source and the JDBC fence
 * table's listing. Loaded only when fencing-jdbc is on the classpath ({@link #PRESENT}).
 */
final class JdbcOffsetParts {

    static final boolean PRESENT = ClassUtils.isPresent("dev.fencing.jdbc.JdbcIssuerBase",
            JdbcOffsetParts.class.getClassLoader());

    private JdbcOffsetParts() {
    }

    /** The base table on the unique {@link DataSource} bean, or {@code null} when there is none. */
    static IssuerBase issuerBase(BeanFactory beanFactory, String table) {
        return Jdbc.issuerBase(beanFactory, table);
    }

    static FenceInventory inventory(FenceStore store) {
        return Jdbc.inventory(store);
    }

    /** The code that links against fencing-jdbc. */
    private static final class Jdbc {

        static IssuerBase issuerBase(BeanFactory beanFactory, String table) {
            DataSource dataSource = beanFactory.getBeanProvider(DataSource.class).getIfUnique();
            return dataSource == null ? null : new JdbcIssuerBase(dataSource, table);
        }

        static FenceInventory inventory(FenceStore store) {
            return store instanceof JdbcFenceStore jdbc ? new JdbcFenceAdmin(jdbc) : null;
        }
    }
}

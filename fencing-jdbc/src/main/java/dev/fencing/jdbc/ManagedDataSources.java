package dev.fencing.jdbc;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import javax.sql.DataSource;
import java.lang.reflect.Method;

/**
 * Which DataSource a transaction manager binds its transactions' connections to, asked once when a store given that
 * manager is built: JDBC code joins a transaction only through a connection bound for its own DataSource, so a
 * manager of another DataSource leaves the store's checks in autocommit, apart from the method's writes.
 */
final class ManagedDataSources {

    private ManagedDataSources() {
    }

    /**
     * Why the transactions of {@code manager} hold no connection of {@code dataSource}, or {@code null} when they do
     * or when the manager cannot tell (JTA enlists connections in its transactions instead of binding them).
     */
    static String mismatch(PlatformTransactionManager manager, DataSource dataSource) {
        DataSource managed;
        if (manager instanceof DataSourceTransactionManager jdbc) {
            managed = jdbc.getDataSource();
        } else {
            Method getter = ClassUtils.getMethodIfAvailable(manager.getClass(), "getDataSource");
            if (getter != null && DataSource.class.isAssignableFrom(getter.getReturnType())) {
                try { // JpaTransactionManager, HibernateTransactionManager: the DataSource they expose connections of
                    ReflectionUtils.makeAccessible(getter);
                    managed = (DataSource) getter.invoke(manager);
                } catch (ReflectiveOperationException | RuntimeException e) {
                    return null;
                }
            } else if (manager instanceof ResourceTransactionManager resources
                    && resources.getResourceFactory() instanceof DataSource factory) {
                managed = factory;
            } else {
                return null;
            }
        }
        String name = "'" + manager.getClass().getName() + "'";
        if (managed == null) {
            return "its transaction manager " + name + " binds no JDBC connection to its transactions (it has no "
                    + "DataSource set), so the check cannot join them";
        }
        if (key(managed) != key(dataSource)) {
            return "its transaction manager " + name + " manages DataSource " + managed + ", not the store's "
                    + "DataSource " + dataSource;
        }
        return null;
    }

    /** What JDBC code looks a bound connection up by: the target of a transaction-aware proxy, unwrapped. */
    static Object key(DataSource dataSource) {
        DataSource target = dataSource instanceof TransactionAwareDataSourceProxy proxy
                ? proxy.getTargetDataSource() : dataSource;
        return TransactionSynchronizationUtils.unwrapResourceIfNecessary(target);
    }
}

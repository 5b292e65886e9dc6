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
            return "its transaction manager " + name + " manages DataSource " + describe(managed) + ", not the "
                    + "store's DataSource " + describe(dataSource);
        }
        return null;
    }

    /**
     * A DataSource as an operator tells it apart: its type with its pool name and JDBC URL where it has them (a pool
     * not started yet prints no name of its own: HikariCP's {@code toString()} says {@code (null)} then).
     */
    static String describe(DataSource dataSource) {
        String pool = property(dataSource, "getPoolName");
        String url = property(dataSource, "getJdbcUrl");
        if (url == null) {
            url = property(dataSource, "getUrl");
        }
        if (url != null) { // never a credential in a message: no parameters, no user info
            url = url.replaceFirst("[?;].*$", "").replaceFirst("//[^/@]*@", "//");
        }
        if (pool == null && url == null) {
            return String.valueOf(dataSource);
        }
        return dataSource.getClass().getSimpleName() + (pool != null ? " '" + pool + "'" : "")
                + (url != null ? " (" + url + ")" : "");
    }

    private static String property(DataSource dataSource, String getter) {
        Method method = ClassUtils.getMethodIfAvailable(dataSource.getClass(), getter);
        if (method == null || method.getReturnType() != String.class || method.getParameterCount() != 0) {
            return null;
        }
        try {
            ReflectionUtils.makeAccessible(method);
            Object value = method.invoke(dataSource);
            return value == null ? null : value.toString();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** What JDBC code looks a bound connection up by: the target of a transaction-aware proxy, unwrapped. */
    static Object key(DataSource dataSource) {
        DataSource target = dataSource instanceof TransactionAwareDataSourceProxy proxy
                ? proxy.getTargetDataSource() : dataSource;
        return TransactionSynchronizationUtils.unwrapResourceIfNecessary(target);
    }
}

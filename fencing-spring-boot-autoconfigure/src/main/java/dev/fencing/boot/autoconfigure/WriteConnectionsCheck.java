package dev.fencing.boot.autoconfigure;

import dev.fencing.jdbc.JdbcFenceStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jooq.DSLContext;
import org.jooq.impl.DataSourceConnectionProvider;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.util.ClassUtils;

import javax.sql.DataSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Warns at startup of connections a fenced write could take apart from the check's transaction on a JDBC store's
 * DataSource: a {@code DataSource} bean that is the pool behind the store's DataSource when that one wraps it
 * ({@code LazyConnectionDataSourceProxy}, any {@link DelegatingDataSource} but a
 * {@link TransactionAwareDataSourceProxy}, which transaction managers see through: the transaction binds the wrapper,
 * so code on the pool bean finds nothing bound), and a jOOQ {@link DSLContext} built on the store's DataSource, or
 * that pool, without a {@code TransactionAwareDataSourceProxy} (its connections come straight from the pool). A trial
 * of each had a stale token's write commit after a newer one's. No failure: such a bean may serve only reads, or
 * writes no fenced method makes.
 */
final class WriteConnectionsCheck {

    private static final Log LOG = LogFactory.getLog(WriteConnectionsCheck.class);
    private static final int MAX_DEPTH = 8;

    private WriteConnectionsCheck() {
    }

    /** Runs the check for {@code stores}, the JDBC stores the application's fence store is or routes to. */
    static void warn(ListableBeanFactory beans, List<JdbcFenceStore> stores) {
        Map<DataSource, String> dataSourceNames = namesOf(beans);
        for (JdbcFenceStore store : stores) {
            DataSource checked = store.dataSource();
            Set<DataSource> behind = behind(checked);
            String storeSource = nameOr(dataSourceNames, checked) + " (" + checked.getClass().getSimpleName() + ")";
            for (Map.Entry<DataSource, String> bean : dataSourceNames.entrySet()) {
                if (behind.contains(bean.getKey())) {
                    LOG.warn("fencing: DataSource bean '" + bean.getValue() + "' is the pool behind the fence "
                            + "store's DataSource " + storeSource + ", whose transactions bind the wrapper, not the "
                            + "pool: a JdbcTemplate, MyBatis or jOOQ on '" + bean.getValue() + "' finds no transaction "
                            + "and writes in one of its own, outside the fence's, so a write checked with an older "
                            + "token can commit after a newer one's. Write through " + storeSource + " (or wrap it in "
                            + "a TransactionAwareDataSourceProxy instead); nothing to do if no fenced method writes "
                            + "through '" + bean.getValue() + "' (docs/stores.md, \"The write's connection\")");
                }
            }
            if (ClassUtils.isPresent("org.jooq.impl.DataSourceConnectionProvider",
                    WriteConnectionsCheck.class.getClassLoader())) {
                JooqContexts.warn(beans, checked, behind, storeSource);
            }
        }
    }

    /**
     * The DataSources {@code checked} delegates to, down its chain of {@link DelegatingDataSource}s, up to a
     * {@link TransactionAwareDataSourceProxy}, whose target transactions bind (not included, nor below it).
     */
    static Set<DataSource> behind(DataSource checked) {
        Set<DataSource> found = Collections.newSetFromMap(new IdentityHashMap<>());
        DataSource current = checked;
        for (int depth = 0; depth < MAX_DEPTH && current instanceof DelegatingDataSource delegating
                && !(current instanceof TransactionAwareDataSourceProxy); depth++) {
            current = delegating.getTargetDataSource();
            if (current == null) {
                break;
            }
            found.add(current);
        }
        return found;
    }

    private static Map<DataSource, String> namesOf(ListableBeanFactory beans) {
        Map<DataSource, String> names = new IdentityHashMap<>();
        beans.getBeansOfType(DataSource.class, false, false).forEach((name, source) -> names.put(source, name));
        return names;
    }

    private static String nameOr(Map<DataSource, String> names, DataSource source) {
        String name = names.get(source);
        return name != null ? "'" + name + "'" : "of its own";
    }

    /** The jOOQ half: loaded only when jOOQ is on the class path. */
    private static final class JooqContexts {

        static void warn(ListableBeanFactory beans, DataSource checked, Set<DataSource> behind, String storeSource) {
            List<String> direct = new ArrayList<>();
            beans.getBeansOfType(DSLContext.class, false, false).forEach((name, context) -> {
                if (context.configuration().connectionProvider() instanceof DataSourceConnectionProvider provider) {
                    DataSource source = provider.dataSource();
                    if (!(source instanceof TransactionAwareDataSourceProxy)
                            && (source == checked || behind.contains(source))) {
                        direct.add("'" + name + "'");
                    }
                }
            });
            if (!direct.isEmpty()) {
                LOG.warn("fencing: DSLContext bean " + String.join(", ", direct) + " takes its connections straight "
                        + "from the fence store's DataSource " + storeSource + ", not through Spring's transaction: "
                        + "what a fenced method writes with it commits on a connection of its own, outside the "
                        + "fence's transaction, so a write checked with an older token can commit after a newer "
                        + "one's. Build it on new TransactionAwareDataSourceProxy(dataSource), or use Spring Boot's "
                        + "DSLContext (docs/stores.md, \"The write's connection\")");
            }
        }
    }
}

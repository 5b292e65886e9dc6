package dev.fencing.boot.autoconfigure;

import dev.fencing.jdbc.JdbcFenceStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jooq.DSLContext;
import org.jooq.impl.DataSourceConnectionProvider;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;
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
 * DataSource. Spring binds a transaction's connection to the DataSource its manager has (seeing through a
 * {@link TransactionAwareDataSourceProxy} only), and code finds it only through that same DataSource. So: a
 * {@code DataSource} bean that is the pool behind the store's DataSource (below a {@code LazyConnectionDataSourceProxy}
 * or any other {@link DelegatingDataSource} but a {@code TransactionAwareDataSourceProxy}, or a target of an
 * {@link AbstractRoutingDataSource}), or a bean that wraps the store's DataSource the same way; and a jOOQ
 * {@link DSLContext} whose connections come from the store's DataSource or any DataSource below it without a
 * {@code TransactionAwareDataSourceProxy} on the way (built by hand: {@code DSL.using(dataSource, dialect)}). A trial
 * of each had a stale token's write commit after a newer one's. No failure: such a bean may serve only reads, or
 * writes no fenced method makes. Not seen: a {@code DSLContext} with a connection provider of its own, and
 * connections code takes itself.
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
            Set<DataSource> behind = below(checked, true);
            Set<DataSource> storeSide = Collections.newSetFromMap(new IdentityHashMap<>());
            storeSide.addAll(behind);
            storeSide.add(checked);
            String storeSource = nameOr(dataSourceNames, checked) + " (" + checked.getClass().getSimpleName() + ")";
            for (Map.Entry<DataSource, String> bean : dataSourceNames.entrySet()) {
                DataSource source = bean.getKey();
                String how = source == checked ? null : behind.contains(source) ? "is the pool behind"
                        : reaches(source, storeSide) ? "wraps" : null;
                if (how != null) {
                    LOG.warn("fencing: DataSource bean '" + bean.getValue() + "' " + how + " the fence store's "
                            + "DataSource " + storeSource + ", whose transactions bind that one: a JdbcTemplate, "
                            + "MyBatis or jOOQ on '" + bean.getValue() + "' finds no transaction and writes in one of "
                            + "its own, outside the fence's, so a write checked with an older token can commit after "
                            + "a newer one's. Write through " + storeSource + " itself (a "
                            + "TransactionAwareDataSourceProxy as the store's DataSource, in place of another wrapper, "
                            + "lets code on the pool join); "
                            + "nothing to do if no fenced method writes through '" + bean.getValue() + "' (docs/"
                            + "stores.md, \"The write's connection\"; logging " + WriteConnectionsCheck.class.getName()
                            + " at ERROR silences it)");
                }
            }
            if (ClassUtils.isPresent("org.jooq.impl.DataSourceConnectionProvider",
                    WriteConnectionsCheck.class.getClassLoader())) {
                Set<DataSource> reachable = below(checked, false);
                reachable.add(checked);
                JooqContexts.warn(beans, reachable, storeSource);
            }
        }
    }

    /**
     * The DataSources {@code top} delegates to, down its chain of {@link DelegatingDataSource}s and the targets of an
     * {@link AbstractRoutingDataSource}; with {@code stopAtTransactionAware}, not below a
     * {@link TransactionAwareDataSourceProxy}, whose target the transactions bind (so code on it joins them).
     */
    static Set<DataSource> below(DataSource top, boolean stopAtTransactionAware) {
        Set<DataSource> found = Collections.newSetFromMap(new IdentityHashMap<>());
        collect(top, stopAtTransactionAware, found, 0);
        return found;
    }

    private static void collect(DataSource source, boolean stopAtTransactionAware, Set<DataSource> found, int depth) {
        if (depth >= MAX_DEPTH || (stopAtTransactionAware && source instanceof TransactionAwareDataSourceProxy)) {
            return;
        }
        List<DataSource> next = new ArrayList<>();
        if (source instanceof DelegatingDataSource delegating && delegating.getTargetDataSource() != null) {
            next.add(delegating.getTargetDataSource());
        } else if (source instanceof AbstractRoutingDataSource routing) {
            try {
                next.addAll(routing.getResolvedDataSources().values());
                if (routing.getResolvedDefaultDataSource() != null) {
                    next.add(routing.getResolvedDefaultDataSource());
                }
            } catch (IllegalStateException notResolvedYet) {
                // not initialized (not a bean): its targets are unknown
            }
        }
        for (DataSource target : next) {
            if (found.add(target)) {
                collect(target, stopAtTransactionAware, found, depth + 1);
            }
        }
    }

    /**
     * Whether code on {@code source} takes its connections from {@code targets} (it is one, or one is below it) with no
     * {@link TransactionAwareDataSourceProxy} on the way, so it finds no transaction bound for them.
     */
    static boolean reaches(DataSource source, Set<DataSource> targets) {
        if (source instanceof TransactionAwareDataSourceProxy) {
            return false;
        }
        if (targets.contains(source)) {
            return true;
        }
        for (DataSource below : below(source, true)) {
            if (targets.contains(below)) {
                return true;
            }
        }
        return false;
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

        /** Warns of the {@code DSLContext} beans (prototypes too) whose connections bypass Spring's transaction. */
        static void warn(ListableBeanFactory beans, Set<DataSource> reachable, String storeSource) {
            List<String> direct = new ArrayList<>();
            beans.getBeansOfType(DSLContext.class, true, false).forEach((name, context) -> {
                if (context.configuration().connectionProvider() instanceof DataSourceConnectionProvider provider
                        && reaches(provider.dataSource(), reachable)) {
                    direct.add("'" + name + "'");
                }
            });
            if (!direct.isEmpty()) {
                LOG.warn("fencing: DSLContext bean " + String.join(", ", direct) + " takes its connections from the "
                        + "fence store's DataSource " + storeSource + " (or one below it) directly, not through "
                        + "Spring's transaction: what a fenced method writes with it commits on a connection of its "
                        + "own, outside the fence's transaction, so a write checked with an older token can commit "
                        + "after a newer one's. Build it on new TransactionAwareDataSourceProxy(dataSource), or use "
                        + "Spring Boot's DSLContext (docs/stores.md, \"The write's connection\"; logging "
                        + WriteConnectionsCheck.class.getName() + " at ERROR silences it)");
            }
        }

    }
}

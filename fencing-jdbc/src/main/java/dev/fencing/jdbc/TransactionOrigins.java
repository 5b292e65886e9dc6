package dev.fencing.jdbc;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionSynchronizationUtils;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * Which transaction manager began the innermost transaction on a thread, so that a {@link JdbcFenceStore} can refuse
 * a fenced call whose innermost transaction is another data source's, nested inside one of the store's (a
 * {@code @Transactional("otherTm")} method called from the primary manager's transaction): Spring's bound resources
 * alone look the same as the safe nesting the other way round. It listens to the transaction managers given to
 * {@link #listenTo}, or to every {@link PlatformTransactionManager} bean through {@link #beanPostProcessor()} (the
 * Spring Boot starter registers it); transactions of a manager it does not listen to are not seen.
 */
public final class TransactionOrigins {

    private static final Log LOG = LogFactory.getLog(TransactionOrigins.class);
    private static final ThreadLocal<Deque<Begun>> BEGUN = new ThreadLocal<>();
    private static final Map<PlatformTransactionManager, Boolean> WARNED =
            Collections.synchronizedMap(new WeakHashMap<>());
    private static volatile boolean listening;

    private TransactionOrigins() {
    }

    /**
     * Listens to the transactions {@code manager} begins from now on (idempotent). The listener is added to the
     * manager's listeners, also when these were set as an unmodifiable collection (as Spring Boot does).
     *
     * @param manager a thread-bound transaction manager
     * @param name    how refusals name the manager (its bean name, say)
     */
    public static void listenTo(PlatformTransactionManager manager, String name) {
        Objects.requireNonNull(manager, "manager");
        Objects.requireNonNull(name, "name");
        String type = manager.getClass().getSimpleName();
        String described = name + " (" + (type.isEmpty() ? manager.getClass().getName() : type) + ")";
        if (!(manager instanceof ConfigurableTransactionManager configurable)) {
            if (WARNED.put(manager, Boolean.TRUE) != null) {
                return;                                // the starter's post-processor and a store bean both ask
            }
            LOG.warn("Transaction manager " + described + " takes no transaction listeners (it is not a "
                    + "ConfigurableTransactionManager, a wrapper around one, say), so a JdbcFenceStore does not see "
                    + "the transactions it begins: a fenced call in one of them, nested inside a transaction of the "
                    + "store's DataSource, is not refused. Listen to the manager it delegates to "
                    + "(TransactionOrigins.listenTo(manager, name)), or make it a bean of its own; once that manager is "
                    + "listened to, this warning can be silenced by logging " + TransactionOrigins.class.getName()
                    + " at ERROR");
            return;
        }
        Collection<TransactionExecutionListener> present = configurable.getTransactionExecutionListeners();
        if (present.stream().anyMatch(Listener.class::isInstance)) {
            return;
        }
        Object resource = manager instanceof ResourceTransactionManager resources
                && resources.getResourceFactory() != null
                ? TransactionSynchronizationUtils.unwrapResourceIfNecessary(resources.getResourceFactory()) : null;
        List<TransactionExecutionListener> listeners = new ArrayList<>(present);
        listeners.add(new Listener(described, resource));
        configurable.setTransactionExecutionListeners(listeners);
        listening = true;
    }

    /**
     * A post-processor that {@linkplain #listenTo listens to} every {@link PlatformTransactionManager} bean, named by
     * its bean name. Declare it as a {@code static @Bean} in an application without the Spring Boot starter.
     */
    public static BeanPostProcessor beanPostProcessor() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
                if (bean instanceof PlatformTransactionManager manager) {
                    listenTo(manager, "'" + beanName + "'");
                }
                return bean;
            }
        };
    }

    /** Whether any transaction manager in this JVM is listened to. */
    static boolean listening() {
        return listening;
    }

    /**
     * The manager that began the innermost live transaction on this thread that bound resources, when none of them is
     * {@code resource}; {@code null} when that transaction holds {@code resource}, or when no listened transaction
     * that bound anything is live (none, savepoints only, or JTA, which binds nothing).
     */
    static String innermostWithout(Object resource) {
        Deque<Begun> begun = BEGUN.get();
        if (begun == null) {
            return null;
        }
        prune(begun);
        for (Begun transaction : begun) {              // innermost first
            if (transaction.bound == null || transaction.bound.length == 0) {
                continue;                              // not begun yet, a savepoint, or one binding nothing
            }
            return transaction.holds(resource) ? null : transaction.manager;
        }
        return null;
    }

    /** How many listened transactions this thread holds (begun, not yet seen to end), for tests. */
    static int onThisThread() {
        Deque<Begun> begun = BEGUN.get();
        return begun == null ? 0 : begun.size();
    }

    /** Drops the transactions that completed without a callback reaching us (a listener list replaced later). */
    private static void prune(Deque<Begun> begun) {
        begun.removeIf(transaction -> transaction.execution.isCompleted());
        if (begun.isEmpty()) {
            BEGUN.remove();
        }
    }

    private static void ended(TransactionExecution execution) {
        Deque<Begun> begun = BEGUN.get();
        if (begun == null) {
            return;
        }
        for (Iterator<Begun> it = begun.iterator(); it.hasNext(); ) {
            if (it.next().execution == execution) {
                it.remove();
                break;
            }
        }
        prune(begun);
    }

    /** One transaction begun by a listened manager: the resources bound before its begin, then those it bound. */
    private static final class Begun {
        final TransactionExecution execution;
        final String manager;
        final Object[] before;
        Object[] bound;

        Begun(TransactionExecution execution, String manager, Object[] before) {
            this.execution = execution;
            this.manager = manager;
            this.before = before;
        }

        /**
         * Records the resources bound now that were not before the begin (one or two: a data source, a JPA unit), and
         * the manager's own resource when it is bound, also if it was bound before: an entity manager opened for the
         * request (open-in-view) is bound before the JPA transaction begins, which then takes it over.
         */
        void begun(Set<Object> now, Object own) {
            Object[] added = new Object[now.size()];
            int count = 0;
            for (Object key : now) {
                if (!contains(before, key) || key.equals(own)) {
                    added[count++] = key;
                }
            }
            bound = count == added.length ? added : Arrays.copyOf(added, count);
        }

        boolean holds(Object resource) {
            return contains(bound, resource);
        }

        private static boolean contains(Object[] keys, Object key) {
            for (Object candidate : keys) {
                if (candidate.equals(key)) {
                    return true;
                }
            }
            return false;
        }
    }

    /** The listener added to each manager: records its transactions' begins and ends on the thread. */
    private static final class Listener implements TransactionExecutionListener {
        private final String manager;
        private final Object resource;

        Listener(String manager, Object resource) {
            this.manager = manager;
            this.resource = resource;
        }

        @Override
        public void beforeBegin(TransactionExecution transaction) {
            Deque<Begun> begun = BEGUN.get();
            if (begun == null) {
                begun = new ArrayDeque<>(4);
                BEGUN.set(begun);
            } else {
                begun.removeIf(earlier -> earlier.execution.isCompleted());
            }
            begun.push(new Begun(transaction, manager,
                    TransactionSynchronizationManager.getResourceMap().keySet().toArray()));
        }

        @Override
        public void afterBegin(TransactionExecution transaction, Throwable beginFailure) {
            Deque<Begun> begun = BEGUN.get();
            if (begun == null) {
                return;
            }
            if (beginFailure != null) {
                ended(transaction);
                return;
            }
            for (Begun candidate : begun) {
                if (candidate.execution == transaction) {
                    // a savepoint (NESTED) is no transaction of its own: it takes nothing over
                    candidate.begun(TransactionSynchronizationManager.getResourceMap().keySet(),
                            transaction.isNewTransaction() ? resource : null);
                    return;
                }
            }
        }

        @Override
        public void afterCommit(TransactionExecution transaction, Throwable commitFailure) {
            ended(transaction);
        }

        @Override
        public void afterRollback(TransactionExecution transaction, Throwable rollbackFailure) {
            ended(transaction);
        }
    }
}

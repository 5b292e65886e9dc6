package dev.fencing.jdbc;

import dev.fencing.guard.LogPace;
import dev.fencing.metrics.ResourceFamilies;
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
 * Spring Boot starter registers it). Without Boot, a {@code JdbcFenceStore} bean listens to every manager bean itself
 * once the singletons exist, and so does a store that is no bean behind a route of the application's
 * {@code RoutingFenceStore} bean: {@code @EnableFencing}'s startup check hands it the bean factory
 * ({@link JdbcFenceStore#setBeanFactory}) before verifying it. Transactions of a manager it does not listen to are
 * not seen. It also reports,
 * at WARNING, a transaction of its own ({@code REQUIRES_NEW}) begun inside a fenced call's body and committed with no
 * fenced check in it: its writes commit apart from the fence.
 */
public final class TransactionOrigins {

    private static final Log LOG = LogFactory.getLog(TransactionOrigins.class);
    private static final ThreadLocal<Deque<Begun>> BEGUN = new ThreadLocal<>();
    /** The resource of the innermost fenced call whose body runs on this thread, or none. */
    private static final ThreadLocal<String> FENCED_BODY = new ThreadLocal<>();
    /** Transactions of their own begun inside a fenced body on this thread, innermost first. */
    private static final ThreadLocal<Deque<OwnTransaction>> OWN = new ThreadLocal<>();
    /** One warning per resource family and manager every ten minutes. */
    private static final LogPace OWN_PACE = new LogPace(1_000, 600_000, "other");
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
                    + "(TransactionOrigins.listenTo(manager, name)), or make it a bean of its own; "
                    + "once that manager is listened to, this warning can be silenced by logging "
                    + TransactionOrigins.class.getName() + " at ERROR");
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

    /**
     * Marks the body of a fenced call on {@code resource} running on this thread, until {@link #exitFencedBody}: a
     * transaction of its own that a listened manager begins and commits meanwhile with no check in it is reported.
     * Also counts as the check of the innermost such transaction an outer body began (a fenced call inside it).
     *
     * @return what to give {@link #exitFencedBody}
     */
    static String enterFencedBody(String resource) {
        Deque<OwnTransaction> own = OWN.get();
        if (own != null && !own.isEmpty()) {
            own.peek().checked = true;
        }
        String outer = FENCED_BODY.get();
        FENCED_BODY.set(resource);
        return outer;
    }

    /**
     * Whether this thread runs the body of a fenced call on {@code resource} now: a check of that resource in a
     * transaction of its own waits on the fence row that body's (suspended) transaction holds, which is this thread's.
     */
    static boolean inFencedBodyOf(String resource) {
        return resource.equals(FENCED_BODY.get());
    }

    /** Ends the body {@link #enterFencedBody} marked; {@code outer} is what it returned. */
    static void exitFencedBody(String outer) {
        if (outer == null) {
            FENCED_BODY.remove();
        } else {
            FENCED_BODY.set(outer);
        }
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

    /** Takes {@code execution} off this thread's transactions of their own begun in a fenced body, if it is one. */
    private static OwnTransaction endedOwn(TransactionExecution execution) {
        Deque<OwnTransaction> own = OWN.get();
        if (own == null) {
            return null;
        }
        OwnTransaction found = null;
        for (Iterator<OwnTransaction> it = own.iterator(); it.hasNext(); ) {
            OwnTransaction candidate = it.next();
            if (candidate.execution == execution || candidate.execution.isCompleted()) {
                it.remove();
                if (candidate.execution == execution) {
                    found = candidate;
                }
            }
        }
        if (own.isEmpty()) {
            OWN.remove();
        }
        return found;
    }

    private static void warnUnfenced(OwnTransaction own) {
        long heldBack = OWN_PACE.due(ResourceFamilies.family(own.resource) + " " + own.manager,
                System.currentTimeMillis());
        if (heldBack < 0) {
            return;
        }
        LOG.warn("A transaction of its own (REQUIRES_NEW) was begun by transaction manager " + own.manager + " inside "
                + "the fenced call on resource '" + own.resource + "', and committed with no @Fenced check in it: "
                + "what it wrote is not fenced. It committed apart from the transaction that holds the check; if "
                + "that one rolls back, max_seen goes back with it while these writes stay, and a holder of an older "
                + "token can write after them. Make the write in the fence's transaction, or fence the method that "
                + "makes it; a row meant to outlive the call (an audit entry) can stay as it is (logged at most every "
                + "ten minutes per resource family and manager"
                + (heldBack > 0 ? "; " + heldBack + " more since the last line" : "") + ")");
    }

    /** A transaction of its own begun in the body of a fenced call: whether a fenced call checked inside it. */
    private static final class OwnTransaction {
        final TransactionExecution execution;
        final String resource;
        final String manager;
        boolean checked;

        OwnTransaction(TransactionExecution execution, String resource, String manager) {
            this.execution = execution;
            this.resource = resource;
            this.manager = manager;
        }
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
            String fenced = FENCED_BODY.get();
            if (fenced != null && transaction.isNewTransaction() && !transaction.isReadOnly()) {
                Deque<OwnTransaction> own = OWN.get();
                if (own == null) {
                    own = new ArrayDeque<>(2);
                    OWN.set(own);
                }
                own.push(new OwnTransaction(transaction, fenced, manager));
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
            OwnTransaction own = endedOwn(transaction);
            if (own != null && !own.checked && commitFailure == null) {
                warnUnfenced(own);
            }
            ended(transaction);
        }

        @Override
        public void afterRollback(TransactionExecution transaction, Throwable rollbackFailure) {
            endedOwn(transaction);
            ended(transaction);
        }
    }
}

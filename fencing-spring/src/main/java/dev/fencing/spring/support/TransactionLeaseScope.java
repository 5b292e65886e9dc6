package dev.fencing.spring.support;

import dev.fencing.guard.LeaseScope;
import dev.fencing.issuer.Lease;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.Ordered;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Holds the lock an acquiring fence point took inside a Spring transaction until that transaction has completed: a
 * lock given back before the commit lets the next holder read the data as it was before this holder's writes and
 * overwrite them (a lost update the fence cannot see, since the next holder's token is larger). A later acquiring
 * call for the same resource in the same transaction reuses the held lock. Outside a transaction (no synchronization
 * active) a lease is released when its call returns.
 */
final class TransactionLeaseScope implements LeaseScope {

    private static final Log log = LogFactory.getLog(TransactionLeaseScope.class);

    static final TransactionLeaseScope INSTANCE = new TransactionLeaseScope();

    private TransactionLeaseScope() {
    }

    @Override
    public Lease held(String resource) {
        if (!TransactionSynchronizationManager.isSynchronizationActive()) {
            return null;
        }
        HeldLeases leases = current();
        return leases == null ? null : leases.byResource.get(resource);
    }

    @Override
    public void release(Lease lease) {
        if (!TransactionSynchronizationManager.isSynchronizationActive()) {
            lease.close();
            return;
        }
        HeldLeases leases = current();
        if (leases == null) {
            leases = new HeldLeases();
            TransactionSynchronizationManager.registerSynchronization(leases);
        }
        String resource = lease.token().resource();
        if (leases.byResource.putIfAbsent(resource, lease) == null) {
            warnOfLockInsideTransaction(resource);
        }
    }

    /**
     * Warns, once per resource family, of a lock taken inside a transaction that was already active (the acquiring
     * advisor runs outside the method's own {@code @Transactional}, so the transaction still active here is a
     * caller's): unless it reads at READ COMMITTED or below, its reads may come from a snapshot taken before the lock,
     * before the previous holder's commit (REPEATABLE READ, MariaDB's and MySQL's default, takes it at the first
     * read), and a read-modify-write under the lock then loses that holder's update with a newer token the fence
     * accepts. A trial on MariaDB lost one of two concurrent purchases this way, with no signal.
     */
    private void warnOfLockInsideTransaction(String resource) {
        Integer isolation = TransactionSynchronizationManager.getCurrentTransactionIsolationLevel();
        if (isolation == null) {
            isolation = defaultIsolationOfBoundConnection();
        }
        if (isolation != null && isolation <= java.sql.Connection.TRANSACTION_READ_COMMITTED) {
            return; // each statement reads what was committed before it: the previous holder's writes included
        }
        String family = dev.fencing.retention.ResourceFamily.of(resource); // the library's one notion of family
        if (family == null) {
            family = resource;
        }
        if (warnedFamilies.size() >= MAX_WARNED_FAMILIES || !warnedFamilies.add(family)) {
            return;
        }
        log.warn("A lock on '" + resource + "' was taken by @Fenced(acquire = true) inside a transaction that was "
                + "already active (a caller's @Transactional around the acquiring method; said once per resource "
                + "family): at REPEATABLE READ (MariaDB's and MySQL's default) or above, the transaction may read "
                + "from a snapshot taken before the lock, without the previous holder's committed writes, and a "
                + "read-modify-write under the lock then overwrites them with a newer token the fence accepts (a lost "
                + "update). Take the lock before the transaction begins: make the outermost @Transactional method "
                + "the acquiring one, or call the acquiring method outside it; or run that transaction at "
                + "@Transactional(isolation = Isolation.READ_COMMITTED)");
    }

    /**
     * For a transaction that declared no isolation: the default isolation its JDBC driver reports for a connection
     * the transaction holds (Spring's {@code ConnectionHolder}, read through its public {@code getConnection()}; its
     * metadata answers without a round trip: READ COMMITTED for PostgreSQL and H2, REPEATABLE READ for MariaDB and
     * MySQL), or {@code null} when it holds none or it cannot be read. Only on the path of a lock taken inside a
     * transaction, until its family was warned of.
     */
    private static Integer defaultIsolationOfBoundConnection() {
        for (Object held : TransactionSynchronizationManager.getResourceMap().values()) {
            java.lang.reflect.Method getConnection = CONNECTION_GETTERS.get(held.getClass());
            if (getConnection == null) {
                continue;
            }
            try {
                Object connection = getConnection.invoke(held);
                if (connection instanceof java.sql.Connection jdbc) {
                    return jdbc.getMetaData().getDefaultTransactionIsolation();
                }
            } catch (ReflectiveOperationException | java.sql.SQLException | RuntimeException e) {
                return null; // cannot tell: warn
            }
        }
        return null;
    }

    /** Per class, Spring JDBC's {@code ConnectionHolder.getConnection()}, or {@code null} for any other holder. */
    private static final ClassValue<java.lang.reflect.Method> CONNECTION_GETTERS = new ClassValue<>() {
        @Override
        protected java.lang.reflect.Method computeValue(Class<?> type) {
            if (!type.getName().equals("org.springframework.jdbc.datasource.ConnectionHolder")) {
                return null;
            }
            try {
                return type.getMethod("getConnection");
            } catch (NoSuchMethodException e) {
                return null;
            }
        }
    };

    /** The resource families warned of ({@link #warnOfLockInsideTransaction}); bounded, as their number should be. */
    private final java.util.Set<String> warnedFamilies = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private static final int MAX_WARNED_FAMILIES = 64;

    /** This transaction's leases: the synchronization registered with it, if any (not a suspended one's). */
    private static HeldLeases current() {
        for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
            if (synchronization instanceof HeldLeases leases) {
                return leases;
            }
        }
        return null;
    }

    /** The leases one transaction holds, released in reverse order once it has committed or rolled back. */
    private static final class HeldLeases implements TransactionSynchronization {
        final Map<String, Lease> byResource = new LinkedHashMap<>();

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE; // after every other synchronization has seen the completion
        }

        @Override
        public void afterCompletion(int status) {
            List<Lease> leases = new ArrayList<>(byResource.values());
            byResource.clear();
            for (int i = leases.size() - 1; i >= 0; i--) {
                Lease lease = leases.get(i);
                try {
                    lease.close();
                } catch (RuntimeException e) {
                    log.warn("Could not release the lock on '" + lease.token().resource() + "' after the transaction "
                            + "completed; it is freed when its lease expires: " + e, e);
                }
            }
        }
    }
}

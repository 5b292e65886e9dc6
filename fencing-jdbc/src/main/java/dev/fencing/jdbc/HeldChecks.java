package dev.fencing.jdbc;

import dev.fencing.token.FencingToken;
import org.springframework.core.Ordered;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The checks one transaction passed in a {@link JdbcFenceStore}'s default mode on MariaDB or H2, read back once before
 * its commit. There a deadlock rolls back the whole transaction, the checks with it, and a method body that catches
 * the error goes on in a new transaction on the same connection, without the fence rows' locks: a newer holder can
 * then write before this one commits. A row that no longer holds the token and holder its check left refuses the
 * commit ({@link FenceConflictException}). PostgreSQL needs none of it: a failed statement aborts its transaction.
 */
final class HeldChecks implements TransactionSynchronization {

    private final JdbcFenceStore store;
    /** Per resource, the token of its last check in the transaction (a nested newer one replaces it). */
    private final Map<String, FencingToken> held = new LinkedHashMap<>(4);

    private HeldChecks(JdbcFenceStore store) {
        this.store = store;
    }

    /**
     * Records an accepted check in the current transaction's {@code HeldChecks} of {@code store}, registered with the
     * transaction on its first; nothing without transaction synchronization. Found among the transaction's
     * synchronizations, so that a transaction suspended by {@code REQUIRES_NEW} keeps its own.
     */
    static void hold(JdbcFenceStore store, String resource, FencingToken token) {
        if (!TransactionSynchronizationManager.isSynchronizationActive()) {
            return;
        }
        for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
            if (synchronization instanceof HeldChecks checks && checks.store == store) {
                checks.held.put(resource, token);
                return;
            }
        }
        HeldChecks checks = new HeldChecks(store);
        checks.held.put(resource, token);
        TransactionSynchronizationManager.registerSynchronization(checks);
    }

    /** Last: writes made in other synchronizations' {@code beforeCommit} are covered too. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public void beforeCommit(boolean readOnly) {
        store.verifyHeld(held);
    }
}

package dev.fencing.r2dbc;

import io.r2dbc.spi.ConnectionFactory;
import org.springframework.r2dbc.connection.ConnectionHolder;
import org.springframework.transaction.reactive.TransactionContext;
import org.springframework.transaction.support.ResourceHolderSupport;

import java.util.Map;

/**
 * Whether a fence check on a connection factory's connection would be part of the transaction the caller's writes
 * commit with, read off the caller's reactive {@link TransactionContext}. A nested transaction of another manager
 * shares its outer transaction's context (Spring's {@code TransactionalOperator} reuses it), so the store's
 * connection stays bound there: the innermost transaction is the one whose resource was bound last (the context
 * keeps its resources in binding order) among those in a transaction, which for an R2DBC connection means not in
 * auto-commit.
 */
final class TransactionBinding {

    /** The refusal when no reactive transaction is active on the store's connection factory. */
    static final String NONE = "no reactive transaction is active on the store's ConnectionFactory, so the check and "
            + "the write could not commit or roll back together. Subscribe the fenced publisher inside a transaction "
            + "of an R2dbcTransactionManager on the same ConnectionFactory (TransactionalOperator.transactional(...) "
            + "or @Transactional on the reactive method).";

    private TransactionBinding() {
    }

    /**
     * Why a check on {@code store}'s connection may not run in {@code context}'s transaction, or {@code ""} when it
     * may: that transaction is active, read-write, on a connection of {@code store} out of auto-commit, and the
     * innermost one.
     */
    static String refusal(TransactionContext context, ConnectionFactory store) {
        Map<Object, Object> resources = context.getResources();
        Object own = resources.get(store);
        if (!context.isActualTransactionActive()) {
            return NONE;
        }
        Object innermost = null;
        for (Map.Entry<Object, Object> bound : resources.entrySet()) {
            if (inTransaction(bound.getValue())) {
                innermost = bound.getKey();
            }
        }
        if (own == null) {
            return innermost == null ? NONE : NONE + " The transaction active is on " + describe(innermost)
                    + ": with several connection factories, check which transaction manager the transaction uses "
                    + "(an unqualified @Transactional takes the primary one).";
        }
        if (!inTransaction(own)) {
            return "the store's ConnectionFactory has a connection in the caller's reactive transaction context, but in "
                    + "auto-commit, not in a transaction of its own (a statement ran on it inside another transaction "
                    + "manager's transaction): the check would commit at once, apart from the write. Run the fenced "
                    + "call in a transaction of an R2dbcTransactionManager on the store's ConnectionFactory.";
        }
        if (innermost != store) {
            return "the innermost transaction of the caller's reactive transaction context is on " + describe(innermost)
                    + " and holds nothing of the store's ConnectionFactory: the check would run in the outer "
                    + "transaction of the store's ConnectionFactory while the method's writes commit with the inner "
                    + "one. If the method writes to the other connection factory, fence it with a store on that one; "
                    + "if it writes to the store's, call it outside the other transaction (or in a new transaction of "
                    + "the store's, REQUIRES_NEW).";
        }
        if (context.isCurrentTransactionReadOnly()) {
            return "the caller's transaction is read-only (@Transactional(readOnly = true), say), in which the check "
                    + "cannot record the token: it advances max_seen, a write, also for a fenced read. Run the fenced "
                    + "call in a read-write transaction.";
        }
        return "";
    }

    /**
     * Whether a bound resource belongs to a transaction: an R2DBC connection out of auto-commit (a connection bound
     * only to follow another transaction's synchronization is in auto-commit); any other transaction resource holder
     * synchronized with its transaction, counted as one (when in doubt, the store refuses).
     */
    private static boolean inTransaction(Object held) {
        if (held instanceof ConnectionHolder connection) {
            try {
                return !connection.getConnection().isAutoCommit();
            } catch (IllegalStateException released) {
                return false;
            }
        }
        return held instanceof ResourceHolderSupport holder && holder.isSynchronizedWithTransaction();
    }

    private static String describe(Object key) {
        if (key instanceof ConnectionFactory factory) {
            String database;
            try {
                database = factory.getMetadata().getName() + ", ";
            } catch (RuntimeException unknown) {
                database = "";
            }
            return "another ConnectionFactory (" + database + identity(key) + ")";
        }
        return "the resource " + identity(key) + " of another transaction manager";
    }

    private static String identity(Object key) {
        return key.getClass().getSimpleName() + "@" + Integer.toHexString(System.identityHashCode(key));
    }
}

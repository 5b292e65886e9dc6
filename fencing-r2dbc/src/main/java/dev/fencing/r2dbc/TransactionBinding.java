package dev.fencing.r2dbc;

import io.r2dbc.spi.ConnectionFactory;
import org.springframework.r2dbc.connection.ConnectionHolder;
import org.springframework.transaction.reactive.TransactionContext;
import org.springframework.transaction.support.ResourceHolderSupport;

import java.util.Map;

/**
 * Whether a fence check on a connection factory's connection would be part of the transaction the caller's writes
 * commit with, read off the caller's reactive {@link TransactionContext}. A nested transaction of another manager
 * shares its outer transaction's context (Spring's {@code TransactionalOperator} reuses it), and the context does not
 * record which of the two is the innermost: a transaction resumed after a {@code REQUIRES_NEW} is bound again at the
 * end of its resources. So the store's transaction must be the only one in the context that holds a resource in a
 * transaction (for an R2DBC connection: out of auto-commit); beside another one the store cannot tell where the
 * method's writes commit, and refuses.
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
     * may: that transaction is active, read-write, on a connection of {@code store} out of auto-commit, and no other
     * resource of the context is in a transaction.
     */
    static String refusal(TransactionContext context, ConnectionFactory store) {
        if (!context.isActualTransactionActive()) {
            return NONE;
        }
        Map<Object, Object> resources = context.getResources();
        Object own = resources.get(store);
        Object other = null;
        for (Map.Entry<Object, Object> bound : resources.entrySet()) {
            if (bound.getKey() != store && inTransaction(bound.getValue())) {
                other = bound.getKey();
                break;
            }
        }
        if (own == null) {
            return other == null ? NONE : NONE + " The transaction active is on " + describe(other)
                    + ": with several connection factories, check which transaction manager the transaction uses "
                    + "(an unqualified @Transactional takes the primary one).";
        }
        if (!inTransaction(own)) {
            return "the store's ConnectionFactory has a connection in the caller's reactive transaction context, "
                    + "but in auto-commit, not in a transaction of its own (a statement ran on it inside another "
                    + "transaction manager's transaction): the check would commit at once, "
                    + "apart from the write. Run the fenced call in a transaction of an R2dbcTransactionManager on the "
                    + "store's ConnectionFactory.";
        }
        if (other != null) {
            return "another transaction manager's transaction is active in the caller's reactive transaction context "
                    + "beside the store's, on " + describe(other) + ". Nested transactions of two reactive managers "
                    + "share one context, which does not record which of them is the innermost (a transaction resumed "
                    + "after a REQUIRES_NEW is bound again at its end), so the store cannot tell whether the method's "
                    + "writes commit with the check or with the other transaction. Do not nest the two managers' "
                    + "transactions around a fenced call: run it in a transaction of the store's alone, and fence "
                    + "writes to the other connection factory with a store on that one.";
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

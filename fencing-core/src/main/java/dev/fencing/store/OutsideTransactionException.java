package dev.fencing.store;

import dev.fencing.token.FencingToken;

/**
 * A store that checks in the caller's transaction found none it can check in (none active, or one of a kind it cannot
 * check atomically with, such as a JPA transaction for a JDBC store checking at commit), so the check could not be
 * atomic with the write: a mistake in the application's setup (a fenced write reached without {@code @Transactional}
 * around it), not an outage, and retrying does not help. Nothing was checked and the write did not run.
 */
public class OutsideTransactionException extends FenceStoreException {

    private static final long serialVersionUID = 1L;

    public OutsideTransactionException(String resource, FencingToken presented, String message) {
        super(resource, presented, message, null);
    }

    private OutsideTransactionException(OutsideTransactionException refused, String operation) {
        super(refused.resource(), refused.presented(), operation + ": " + refused.getMessage(), refused);
    }

    /**
     * This refusal with the fenced method that made it named in front ({@code operation}, such as
     * {@code Ledger.append(String)}), the refusal itself its cause.
     */
    public OutsideTransactionException at(String operation) {
        return new OutsideTransactionException(this, operation);
    }
}

package dev.fencing.r2dbc;

import dev.fencing.store.FenceStoreException;
import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;

/**
 * The fence check of an {@link R2dbcFenceStore} did not reach a verdict for a reason that passes: the resource's fence
 * row stayed locked by another transaction longer than the store's lock wait bound ({@link Reason#BUSY}), or the
 * database aborted the check as a serialization failure or deadlock ({@link Reason#CONFLICT}). The write was not
 * subscribed and the transaction must roll back; the whole operation may be retried, for example with
 * {@code retryWhen(Retry.backoff(...).filter(e -> e instanceof TransientFenceFailure))} around the transaction.
 */
public class R2dbcFenceTransientException extends FenceStoreException implements TransientFenceFailure {

    private static final long serialVersionUID = 1L;

    private final Reason reason;

    /**
     * @param resource  the effective resource being checked
     * @param presented the token whose check could not run
     * @param reason    why it could not run
     * @param message   what happened, naming the resource
     * @param cause     the database's error
     */
    public R2dbcFenceTransientException(String resource, FencingToken presented, Reason reason, String message,
                                        Throwable cause) {
        super(resource, presented, message, cause);
        this.reason = reason;
    }

    @Override
    public Reason reason() {
        return reason;
    }
}

package dev.fencing.jdbc;

import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;
import org.springframework.dao.ConcurrencyFailureException;

/**
 * The database aborted a fenced transaction as a serialization failure or a deadlock (SQLSTATE 40001, 40P01,
 * MariaDB 1213), during the check statement or when the store committed the transaction it opened. Nothing of the
 * check or the write persisted; the whole operation may be retried. When it came at a commit ({@link #afterBody()}),
 * the fenced body had run, and what it did outside the database happened. A Spring {@link ConcurrencyFailureException}
 * (so a {@code TransientDataAccessException}, which retry policies match), counted by the guard under outcome
 * {@code conflict}. Under REPEATABLE READ and SERIALIZABLE this is the expected answer to contended writes.
 */
public class FenceConflictException extends ConcurrencyFailureException implements TransientFenceFailure {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final transient FencingToken presented;
    private final boolean afterBody;

    /**
     * @param resource  the effective resource being checked
     * @param presented the token whose check (or commit) was aborted
     * @param message   what happened, naming the resource
     * @param cause     the database's serialization or deadlock error, as Spring translated it
     */
    public FenceConflictException(String resource, FencingToken presented, String message, Throwable cause) {
        this(resource, presented, message, cause, false);
    }

    /**
     * @param afterBody whether the fenced method's body had run ({@link #afterBody()}): a check sent with COMMIT, or
     *                  the commit of a transaction the store opened
     */
    public FenceConflictException(String resource, FencingToken presented, String message, Throwable cause,
            boolean afterBody) {
        super(message, cause);
        this.resource = resource;
        this.presented = presented;
        this.afterBody = afterBody;
    }

    @Override
    public Reason reason() {
        return Reason.CONFLICT;
    }

    @Override
    public String resource() {
        return resource;
    }

    @Override
    public FencingToken presented() {
        return presented;
    }

    @Override
    public boolean afterBody() {
        return afterBody;
    }
}

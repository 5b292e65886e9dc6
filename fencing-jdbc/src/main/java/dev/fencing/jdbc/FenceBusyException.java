package dev.fencing.jdbc;

import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;
import org.springframework.dao.CannotAcquireLockException;

/**
 * The fence check of a resource waited longer than the store's lock wait bound
 * ({@link JdbcFenceStore.Builder#lockTimeout}) for the resource's fence row, which another transaction holds (a
 * writer still inside its fenced body, or a paused zombie). The check did not run and nothing changed; the operation
 * may be retried. The fenced body did not run either, unless the check was sent with COMMIT ({@link #afterBody()}). A
 * Spring {@link CannotAcquireLockException} (so a {@code TransientDataAccessException}, which retry policies match),
 * counted by the guard under outcome {@code busy}.
 */
public class FenceBusyException extends CannotAcquireLockException implements TransientFenceFailure {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final transient FencingToken presented;
    private final boolean afterBody;

    /**
     * @param resource  the effective resource whose fence row was locked
     * @param presented the token whose check could not run, {@code null} for a floor raise
     *                  ({@link JdbcFenceAdmin#raiseFloor}), which presents none
     * @param message   what happened, naming the resource
     * @param cause     the database's lock timeout error
     */
    public FenceBusyException(String resource, FencingToken presented, String message, Throwable cause) {
        this(resource, presented, message, cause, false);
    }

    /**
     * @param afterBody whether the fenced method's body had run ({@link #afterBody()}): a check sent with COMMIT, or
     *                  the commit of a transaction the store opened
     */
    public FenceBusyException(String resource, FencingToken presented, String message, Throwable cause,
            boolean afterBody) {
        super(message, cause);
        this.resource = resource;
        this.presented = presented;
        this.afterBody = afterBody;
    }

    @Override
    public Reason reason() {
        return Reason.BUSY;
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

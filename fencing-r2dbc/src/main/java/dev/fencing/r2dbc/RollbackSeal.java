package dev.fencing.r2dbc;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Wrapped;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.Ordered;
import org.springframework.transaction.reactive.TransactionSynchronization;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.function.Supplier;

/**
 * PostgreSQL: rolls back a fenced transaction that is rolling back itself, in a way that no statement of its body
 * can commit afterwards without its check. Spring R2DBC and r2dbc-postgresql let a statement that was on its way when
 * the transaction was cancelled (a {@code timeout}, a disposed subscription) reach the connection after the rollback:
 * the cancel (which subscribes Spring's rollback) and the body's next statement run on different threads, and the
 * driver sends each statement when it is subscribed, in the order they came, whatever the transaction's state. There
 * the statement ran in auto-commit and committed alone, its check rolled back, so max_seen did not record its write.
 * Before Spring's rollback this sends, in one message (the server runs it whole before it reads the next one),
 * {@code ROLLBACK; SET SESSION default_transaction_read_only = on}: a statement arriving after it runs in a read-only
 * implicit transaction and fails, and one before it is rolled back with the transaction (Spring's transactions begin
 * {@code READ WRITE} explicitly, so they are not affected). Spring's {@code ROLLBACK} then finds the connection out of
 * a transaction and skips it. After the other synchronizations' completion, before the connection goes back to its
 * pool, the session's default is put back ({@code RESET}); a statement arriving later still commits alone (a body that
 * hops threads), as on MariaDB. Closing the connection instead would stop that one too, but r2dbc-pool then hands the
 * closed connection out again under an {@code onErrorContinue} (its validation honours it). Not covered either: a
 * rollback that begins while the transaction's first check is being subscribed (Spring takes the list of
 * synchronizations when the completion starts, perhaps before this one is registered), and a rolled-back savepoint
 * ({@code NESTED}), after which a straggler runs inside the outer transaction.
 */
final class RollbackSeal implements TransactionSynchronization, Ordered {

    /** One message: no statement can run between the rollback and the session's read-only default. */
    static final String SEAL_SQL = "ROLLBACK; SET SESSION default_transaction_read_only = on";

    /** The session's read-only default as it began (its connection's settings), after the rollback. */
    static final String UNSEAL_SQL = "RESET default_transaction_read_only";

    private static final Log log = LogFactory.getLog(RollbackSeal.class);

    /** The transaction's connection (as Spring holds it). */
    private final Connection connection;
    /** Set once the transaction goes to commit: its body completed, and the commit is Spring's to send. */
    private volatile boolean committing;
    /** Set once the session was sealed, to be unsealed after the rollback. */
    private volatile boolean sealed;

    private RollbackSeal(Connection connection) {
        this.connection = connection;
    }

    /**
     * Registers the transaction's seal (once per connection) before {@code check} is subscribed, so that a rollback
     * from then on is sealed; signals {@code refusal} when the transaction has no synchronization to run it in, or
     * no connection of the store's bound.
     */
    static <R> Mono<R> around(R2dbcFenceStore store, Supplier<RuntimeException> refusal, Supplier<Mono<R>> check) {
        return TransactionSynchronizationManager.forCurrentTransaction().flatMap(synchronizations -> {
            Connection connection = store.transactionConnection(synchronizations);
            if (!synchronizations.isSynchronizationActive() || connection == null) {
                return Mono.error(refusal.get());
            }
            boolean sealed = false;
            for (TransactionSynchronization synchronization : synchronizations.getSynchronizations()) {
                sealed |= synchronization instanceof RollbackSeal seal && seal.connection == connection;
            }
            if (!sealed) {
                synchronizations.registerSynchronization(new RollbackSeal(connection));
            }
            return check.get();
        });
    }

    /**
     * The lowest precedence: the seal comes after the other synchronizations' {@code beforeCompletion} (their
     * statements are rolled back with the transaction), and the session is unsealed after their
     * {@code afterCompletion}.
     */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public Mono<Void> beforeCommit(boolean readOnly) {
        committing = true;
        return Mono.empty();
    }

    /** A rollback (no commit began): rolls the transaction back and seals the session in one message. */
    @Override
    public Mono<Void> beforeCompletion() {
        if (committing) {
            return Mono.empty();
        }
        return Flux.from(connection.createStatement(SEAL_SQL).execute())
                .concatMap(Result::getRowsUpdated)
                .then()
                .doOnSuccess(done -> sealed = true)
                .onErrorResume(e -> {
                    // Spring's ROLLBACK follows; a connection that failed this is broken or was closed
                    log.warn("R2dbcFenceStore: could not seal the connection " + connection + " of a rolled-back "
                            + "fenced transaction (" + SEAL_SQL + ")", e);
                    return Mono.empty();
                });
    }

    /**
     * Puts the session's read-only default back as the session began with it, once Spring rolled the transaction
     * back, before the connection goes back to its pool.
     */
    @Override
    public Mono<Void> afterCompletion(int status) {
        if (!sealed) {
            return Mono.empty();
        }
        return Flux.from(connection.createStatement(UNSEAL_SQL).execute())
                .concatMap(Result::getRowsUpdated)
                .then()
                .onErrorResume(e -> {
                    log.warn("R2dbcFenceStore: could not put the read-only default of the connection " + connection
                            + " back after sealing it (" + UNSEAL_SQL + "); closing it", e);
                    return Mono.from(physical(connection).close()).onErrorResume(closing -> Mono.empty());
                });
    }

    /** The driver's connection under a pool's (or other wrappers'). */
    static Connection physical(Connection connection) {
        Connection c = connection;
        for (int i = 0; i < 16 && c instanceof Wrapped<?> wrapped && wrapped.unwrap() instanceof Connection inner
                && inner != c; i++) {
            c = inner;
        }
        return c;
    }
}

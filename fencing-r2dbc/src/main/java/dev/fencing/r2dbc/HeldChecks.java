package dev.fencing.r2dbc;

import dev.fencing.token.FencingToken;
import org.springframework.core.Ordered;
import org.springframework.transaction.reactive.TransactionSynchronization;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The checks one reactive transaction passed on a MariaDB {@link R2dbcFenceStore}, run again just before it commits.
 * A deadlock rolls back the whole transaction, its checks and their row locks included, and a fenced body that catches
 * it goes on in a new transaction without the fence; run again, a check that a newer token passed in between fails
 * the commit, so the stale writes roll back. A check still in force passes again unchanged (the same token and holder).
 */
final class HeldChecks implements TransactionSynchronization, Ordered {

    private final R2dbcFenceStore store;
    /** Per resource, the token of its last check in the transaction; guarded by itself (checks may run at once). */
    private final Map<String, FencingToken> held = new LinkedHashMap<>(4);

    private HeldChecks(R2dbcFenceStore store) {
        this.store = store;
    }

    /**
     * Registers {@code store}'s {@code HeldChecks} with the current transaction unless it has them, and then turns
     * the connection's auto-commit off for the rest of the transaction ({@link R2dbcFenceStore#keepTransactionOpen}):
     * r2dbc-mariadb begins a transaction with auto-commit on, so after a deadlock's rollback each statement would
     * commit at once, before the checks run again. Signals {@code refusal} when the transaction has no
     * synchronization to run them in.
     */
    static Mono<Void> register(R2dbcFenceStore store, Supplier<RuntimeException> refusal) {
        return TransactionSynchronizationManager.forCurrentTransaction().flatMap(synchronizations -> {
            if (!synchronizations.isSynchronizationActive()) {
                return Mono.error(refusal.get());
            }
            if (find(synchronizations, store) != null) {
                return Mono.empty();
            }
            synchronizations.registerSynchronization(new HeldChecks(store));
            return store.keepTransactionOpen();
        });
    }

    /** Records an accepted check in the current transaction's {@code HeldChecks} of {@code store}. */
    static Mono<Void> hold(R2dbcFenceStore store, String resource, FencingToken token) {
        return TransactionSynchronizationManager.forCurrentTransaction().doOnNext(synchronizations -> {
            HeldChecks checks = find(synchronizations, store);
            if (checks == null) {
                checks = new HeldChecks(store);
                synchronizations.registerSynchronization(checks);
            }
            checks.put(resource, token);
        }).then();
    }

    private static HeldChecks find(TransactionSynchronizationManager synchronizations, R2dbcFenceStore store) {
        for (TransactionSynchronization synchronization : synchronizations.getSynchronizations()) {
            if (synchronization instanceof HeldChecks checks && checks.store == store) {
                return checks;
            }
        }
        return null;
    }

    private void put(String resource, FencingToken token) {
        synchronized (held) {
            held.put(resource, token);
        }
    }

    /** Last: writes made in other synchronizations' {@code beforeCommit} are covered too. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public Mono<Void> beforeCommit(boolean readOnly) {
        List<Map.Entry<String, FencingToken>> checks;
        synchronized (held) {
            checks = new ArrayList<>(held.entrySet());
        }
        return Flux.fromIterable(checks).concatMap(check -> store.checkAgain(check.getKey(), check.getValue())).then();
    }
}

package dev.fencing.r2dbc;

import dev.fencing.token.FencingToken;
import io.r2dbc.spi.Connection;
import org.springframework.core.Ordered;
import org.springframework.transaction.reactive.TransactionSynchronization;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The checks one reactive transaction passed on a MariaDB fence table through {@link R2dbcFenceStore}s, run again just
 * before it commits. A deadlock rolls back the whole transaction, its checks and their row locks included, and a fenced
 * body that catches it goes on in a new transaction without the fence; run again, a check that a newer token passed in
 * between fails the commit, so the stale writes roll back. A check still in force passes again unchanged (the same
 * token and holder), and one a rolled-back savepoint undid takes its row again. For a resource the transaction
 * presented several tokens for, a check of another token first finds the row at one of them, and so does the commit
 * before it runs the last one's check again, or they fail (a write under an earlier token may follow a later check, and
 * taking the row again without looking would hide the earlier check's loss). Shared by the stores of one connection
 * factory and table, which see one row per resource.
 */
final class HeldChecks implements TransactionSynchronization, Ordered {

    private final R2dbcFenceStore store;
    /** The transaction's connection, whose auto-commit is put back when it completes; {@code null}: none found. */
    private final Connection connection;
    /** Per resource, the token of its last check in the transaction; guarded by itself (checks may run at once). */
    private final Map<String, FencingToken> held = new LinkedHashMap<>(4);
    /** Per resource the transaction presented more than one token for, those tokens; guarded by {@link #held}. */
    private final Map<String, Set<FencingToken>> several = new HashMap<>(4);

    private HeldChecks(R2dbcFenceStore store, Connection connection) {
        this.store = store;
        this.connection = connection;
    }

    /**
     * Runs {@code check}, {@code store}'s check of {@code token}, with what the transaction's {@code HeldChecks} need
     * first. On the transaction's first check of the store's table: registers them, and turns the connection's
     * auto-commit off until it ends ({@link R2dbcFenceStore#keepTransactionOpen}, put back in afterCompletion:
     * r2dbc-mariadb begins a transaction with auto-commit on, so after a deadlock's rollback each statement would
     * commit at once, before the checks run again), sent together with the check (both are answered before the fenced
     * body runs). When the transaction checked another token for the resource already: first finds the row at one of
     * the tokens it checked ({@link R2dbcFenceStore#confirmAt}). Signals {@code refusal} when the transaction has no
     * synchronization to run the checks in.
     */
    static <R> Mono<R> around(R2dbcFenceStore store, String resource, FencingToken token,
                              Supplier<RuntimeException> refusal, Supplier<Mono<R>> check) {
        return TransactionSynchronizationManager.forCurrentTransaction().flatMap(synchronizations -> {
            if (!synchronizations.isSynchronizationActive()) {
                return Mono.error(refusal.get());
            }
            HeldChecks checks = find(synchronizations, store);
            if (checks == null) {
                synchronizations.registerSynchronization(new HeldChecks(store,
                        store.transactionConnection(synchronizations)));
                return Mono.zip(store.keepTransactionOpen().thenReturn(Boolean.TRUE), check.get(),
                        (kept, row) -> row);
            }
            FencingToken earlier = checks.get(resource);
            return earlier == null || earlier.equals(token) ? check.get()
                    : checks.store.confirmAt(resource, checks.tokens(resource), "before the check of token " + token)
                    .then(Mono.defer(check));
        });
    }

    /** Records an accepted check in the current transaction's {@code HeldChecks} of {@code store}'s table. */
    static Mono<Void> hold(R2dbcFenceStore store, String resource, FencingToken token) {
        return TransactionSynchronizationManager.forCurrentTransaction().doOnNext(synchronizations -> {
            HeldChecks checks = find(synchronizations, store);
            if (checks == null) {
                checks = new HeldChecks(store, store.transactionConnection(synchronizations));
                synchronizations.registerSynchronization(checks);
            }
            checks.put(resource, token);
        }).then();
    }

    private static HeldChecks find(TransactionSynchronizationManager synchronizations, R2dbcFenceStore store) {
        for (TransactionSynchronization synchronization : synchronizations.getSynchronizations()) {
            if (synchronization instanceof HeldChecks checks && checks.store.sharesRowsWith(store)) {
                return checks;
            }
        }
        return null;
    }

    private FencingToken get(String resource) {
        synchronized (held) {
            return held.get(resource);
        }
    }

    private void put(String resource, FencingToken token) {
        synchronized (held) {
            FencingToken earlier = held.put(resource, token);
            if (earlier != null && !earlier.equals(token)) {
                several.computeIfAbsent(resource, r -> new HashSet<>(List.of(earlier))).add(token);
            }
        }
    }

    /** The tokens the transaction checked for {@code resource}. */
    private Set<FencingToken> tokens(String resource) {
        synchronized (held) {
            Set<FencingToken> tokens = several.get(resource);
            return tokens != null ? Set.copyOf(tokens) : Set.of(held.get(resource));
        }
    }

    /**
     * The lowest precedence, so after the synchronizations of other orders; one of the same order registered later
     * runs its {@code beforeCommit} after this one (stores.md says so).
     */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    /** Puts the connection's auto-commit back, whether the transaction committed or rolled back. */
    @Override
    public Mono<Void> afterCompletion(int status) {
        return connection == null ? Mono.empty() : R2dbcFenceStore.restoreAutoCommit(connection);
    }

    @Override
    public Mono<Void> beforeCommit(boolean readOnly) {
        List<Map.Entry<String, FencingToken>> checks;
        Map<String, Set<FencingToken>> strict = new HashMap<>();
        synchronized (held) {
            checks = new ArrayList<>(held.entrySet());
            several.forEach((resource, tokens) -> strict.put(resource, Set.copyOf(tokens)));
        }
        return Flux.fromIterable(checks)
                .concatMap(check -> (strict.containsKey(check.getKey())
                        // the row at one of them (not another transaction's), then the last one's check again
                        ? store.confirmAt(check.getKey(), strict.get(check.getKey()), "before the commit")
                        : Mono.<Void>empty())
                        .then(Mono.defer(() -> store.checkAgain(check.getKey(), check.getValue(),
                                "before the commit"))))
                .then()
                // a refusal must not be dropped by an onErrorContinue downstream of the caller's transaction (it
                // applies to this chain through the context, and would let the commit go on), nor by Spring's own
                // concatMap over the synchronizations, which this cannot reach: the transaction is rolled back here,
                // before the refusal is signalled, so a COMMIT that follows commits none of its writes
                .onErrorResume(refused -> store.rollbackBeforeCommit().onErrorResume(failed -> {
                    refused.addSuppressed(failed);
                    return Mono.empty();
                }).then(Mono.error(refused)))
                .onErrorStop();
    }
}

package dev.fencing.jdbc;

import dev.fencing.store.FenceStoreException;
import dev.fencing.token.FencingToken;
import org.springframework.core.Ordered;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The checks one transaction passed in a {@link JdbcFenceStore}'s default mode on MariaDB or H2, run again once before
 * its commit. There a deadlock rolls back the whole transaction, the checks with it, and a method body that catches the
 * error goes on in a new transaction on the same connection, without the fence rows' locks: a newer holder can then
 * write before this one commits. A check refused the second time refuses the commit ({@link FenceConflictException});
 * one a rolled-back savepoint undid takes its row again. For a resource the transaction presented several tokens for, a
 * check of another token first finds the row at one of them, and so does the commit before it runs the last one's check
 * again, or they fail (a write under an earlier token may follow a later check, and taking the row again without
 * looking would hide the earlier check's loss). Shared by the stores of one DataSource and table, which see one row per
 * resource. PostgreSQL needs none of it: a failed statement aborts its transaction.
 */
final class HeldChecks implements TransactionSynchronization {

    private final JdbcFenceStore store;
    /** Per resource, the token of its last check in the transaction (a nested newer one replaces it). */
    private final Map<String, FencingToken> held = new LinkedHashMap<>(4);
    /** Per resource the transaction presented more than one token for, those tokens. */
    private final Map<String, Set<FencingToken>> several = new HashMap<>(4);

    private HeldChecks(JdbcFenceStore store) {
        this.store = store;
    }

    /**
     * Refuses a check in a transaction without synchronization (a transaction manager set to
     * {@code SYNCHRONIZATION_NEVER}): its checks could not be run again before its commit.
     */
    static void requireSynchronization(String resource, FencingToken token, String table) {
        if (!TransactionSynchronizationManager.isSynchronizationActive()) {
            throw new FenceStoreException(resource, token, "Fence check for resource '" + resource + "' on table '"
                    + table + "' refused: its transaction has no transaction synchronization (a transaction manager "
                    + "set to SYNCHRONIZATION_NEVER), and on MariaDB and H2 the store runs each transaction's checks "
                    + "again before its commit, where a deadlock may have undone them; use the manager's default "
                    + "synchronization. The write did not run", null);
        }
    }

    /**
     * Records an accepted check in the current transaction's {@code HeldChecks} of {@code store}, registered with the
     * transaction on its first (synchronization is active: {@link #requireSynchronization}). Found among the
     * transaction's synchronizations, so that a transaction suspended by {@code REQUIRES_NEW} keeps its own.
     */
    static void hold(JdbcFenceStore store, String resource, FencingToken token) {
        HeldChecks checks = find(store);
        if (checks == null) {
            checks = new HeldChecks(store);
            TransactionSynchronizationManager.registerSynchronization(checks);
        }
        FencingToken earlier = checks.held.put(resource, token);
        if (earlier != null && !earlier.equals(token)) {
            checks.several.computeIfAbsent(resource, r -> new HashSet<>(List.of(earlier))).add(token);
        }
    }

    /**
     * Before {@code store} checks {@code token}: when the current transaction checked another token for the resource
     * already, finds the row at one of the tokens it checked ({@link JdbcFenceStore#confirmAt}), which throws
     * {@link FenceConflictException} when it is not.
     */
    static void confirmEarlier(JdbcFenceStore store, String resource, FencingToken token) {
        HeldChecks checks = find(store);
        FencingToken earlier = checks == null ? null : checks.held.get(resource);
        if (earlier != null && !earlier.equals(token)) {
            checks.store.confirmAt(resource, checks.several.getOrDefault(resource, Set.of(earlier)),
                    "before the check of token " + token);
        }
    }

    /** The current transaction's checks on {@code store}'s rows, or {@code null}. */
    private static HeldChecks find(JdbcFenceStore store) {
        for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
            if (synchronization instanceof HeldChecks checks && checks.store.sharesRowsWith(store)) {
                return checks;
            }
        }
        return null;
    }

    /**
     * The lowest precedence, so after the synchronizations of other orders; one of the same order registered later
     * runs its {@code beforeCommit} after this one (stores.md says so).
     */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public void beforeCommit(boolean readOnly) {
        for (Map.Entry<String, FencingToken> check : held.entrySet()) {
            Set<FencingToken> tokens = several.get(check.getKey());
            if (tokens != null) {
                // the row at one of them (not another transaction's) first; the last one's check then takes it to
                // the last token, under which the transaction may have written
                store.confirmAt(check.getKey(), tokens, "before the commit");
            }
            store.checkAgain(check.getKey(), check.getValue(), "before the commit");
        }
    }
}

package dev.fencing.jdbc;

import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.ResourceFamily;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * Folds the lease rows that are free and idle for longer than an age into their family's floor, one transaction per
 * batch, while acquires run. Each batch locks its rows one by one and re-reads them locked (a row taken since it was
 * listed is left alone), raises each family's floor to the highest token among its folded rows, then deletes them,
 * all in one transaction: an acquire that waited on a folded row finds it gone and, reading the floor only after
 * locking its row, issues above the floor. Rows without a family and floor rows are never folded.
 */
final class LeaseCompaction {

    private static final int ATTEMPTS = 5;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate transactions;
    private final LeaseDialect dialect;
    private final LeaseFloors floors;
    private final String idleRowsSql;
    private final String lockIdleSql;
    private final String deleteSql;

    LeaseCompaction(JdbcTemplate jdbc, TransactionTemplate transactions, LeaseDialect dialect, String table,
                    LeaseFloors floors) {
        this.jdbc = jdbc;
        this.transactions = transactions;
        this.dialect = dialect;
        this.floors = floors;
        this.idleRowsSql = dialect.idleRowsSql(table);
        this.lockIdleSql = dialect.lockIdleSql(table);
        this.deleteSql = dialect.deleteSql(table);
    }

    /** Folds every row idle for longer than {@code idleFor}, {@code batchSize} per transaction (both checked). */
    CompactionResult compact(Duration idleFor, int batchSize) {
        long minusAge = dialect.ttlParameter(-idleFor.toMillis());
        String after = "";
        long folded = 0;
        int batches = 0;
        Set<String> families = new HashSet<>();
        while (true) {
            List<String> listed = jdbc.queryForList(idleRowsSql, String.class, after,
                    LeaseFloors.KEY_PREFIX + "%", minusAge, batchSize);
            if (listed.isEmpty()) {
                break;
            }
            after = listed.get(listed.size() - 1);
            List<String> candidates = new ArrayList<>(listed.size());
            for (String resource : listed) {
                if (ResourceFamily.of(resource) != null) {
                    candidates.add(resource);
                }
            }
            if (!candidates.isEmpty()) {
                Batch batch = foldWithRetry(candidates, minusAge);
                if (batch.folded() > 0) {
                    batches++;
                    folded += batch.folded();
                    families.addAll(batch.families());
                }
            }
            if (listed.size() < batchSize) {
                break;
            }
        }
        return folded == 0 ? CompactionResult.NONE : new CompactionResult(folded, batches, families.size());
    }

    /** What one batch folded: how many rows, and the families whose floors it raised. */
    private record Batch(int folded, Set<String> families) {
    }

    private Batch foldWithRetry(List<String> candidates, long minusAge) {
        for (int attempt = 1; ; attempt++) {
            try {
                return transactions.execute(status -> fold(candidates, minusAge));
            } catch (TransientDataAccessException e) { // a deadlock victim or lock timeout: nothing was folded
                if (attempt == ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    /**
     * One batch, in the caller's transaction: locks and re-reads each candidate, raises each family's floor to the
     * highest token among its rows still idle, deletes those rows.
     */
    private Batch fold(List<String> candidates, long minusAge) {
        TreeMap<String, Long> highest = new TreeMap<>();
        List<Object[]> deletes = new ArrayList<>(candidates.size());
        for (String resource : candidates) {
            long[] row = jdbc.query(lockIdleSql, rs -> rs.next() ? new long[] {rs.getLong(1), rs.getInt(2)} : null,
                    minusAge, resource);
            if (row != null && row[1] == 1) {
                highest.merge(ResourceFamily.of(resource), row[0], Math::max);
                deletes.add(new Object[] {resource});
            }
        }
        if (deletes.isEmpty()) {
            return new Batch(0, Set.of());
        }
        highest.forEach(floors::raise); // in family order: two compactions lock floor rows in the same order
        jdbc.batchUpdate(deleteSql, deletes);
        return new Batch(deletes.size(), highest.keySet());
    }
}

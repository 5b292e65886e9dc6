package dev.fencing.jdbc;

import dev.fencing.recovery.IssuedTokens;
import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.retention.ResourceFamily;
import dev.fencing.store.sql.FenceSql;
import org.springframework.dao.CannotAcquireLockException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Folds idle rows of a {@link JdbcFenceStore}'s table into family floor rows, one transaction per batch (the work
 * behind {@link JdbcFenceAdmin#compact}). A batch reads its candidates without locks, tells the issuer the highest
 * max_seen per family, then, in one transaction that first locks the table against checks
 * ({@link FenceSql#lockForCompactionSql}), re-reads the candidates, deletes those still idle and not above what the
 * issuer was told, and raises their family floor rows to their highest max_seen. While the lock is held no check runs
 * on the table, so none can judge a resource against a floor or a row the batch is changing; a check queued behind
 * the lock runs after the commit and sees the new floor (PostgreSQL and MariaDB in READ COMMITTED take a statement's
 * snapshot after its locks). When the lock is not granted within its bound (a fenced transaction stays open), the
 * batch changes nothing and is tried again, a few times, and then the compaction stops with
 * {@link CannotAcquireLockException}; checks never wait on a compaction for longer than that bound.
 *
 * <p>Why a table lock and not less: a check that read the family floor before the batch committed, and then waited
 * for the row the batch deletes, would insert the resource's row judged against the old floor (PostgreSQL retries
 * an {@code INSERT ... ON CONFLICT} with the values it computed first; InnoDB and H2 alike). Re-checking the row in
 * the {@code DELETE} cannot see that check; a locking read of the floor on the insert path does not stop it either
 * for a family folded the first time (no floor row to lock). H2 has no table lock statement: it raises the floors
 * in a transaction first, waits the store's lock wait bound (the longest a check statement that read the old floor
 * can still be waiting for a row), then deletes in a second one, keeping only rows still idle and not above the
 * floor. A transaction in REPEATABLE READ or SERIALIZABLE whose snapshot predates a batch reads the old floor
 * without waiting on the lock, so on PostgreSQL and H2 compaction is safe for checks in READ COMMITTED (the
 * default); MariaDB reads the floor in a locking read, current whatever the isolation.
 */
final class JdbcFenceCompactor {

    private static final System.Logger LOG = System.getLogger(JdbcFenceCompactor.class.getName());

    /** How long a batch waits for the table lock, each attempt. */
    static final Duration LOCK_TIMEOUT = Duration.ofMillis(200);

    /** Attempts per batch before the compaction stops. */
    static final int LOCK_ATTEMPTS = 5;

    /** Batches in a row that fold nothing (every candidate touched meanwhile) before the compaction stops. */
    private static final int IDLE_ROUNDS = 3;

    private final JdbcFenceStore store;
    private final FenceSql sql;
    private final String table;

    JdbcFenceCompactor(JdbcFenceStore store) {
        this.store = store;
        this.sql = store.dialect().fenceSql();
        this.table = store.table();
    }

    CompactionResult compact(Duration idleFor, int batchSize, IssuerFloors issuer) {
        if (idleFor == null || idleFor.isNegative()) {
            throw new IllegalArgumentException("compact on table '" + table
                    + "': idleFor must be zero or positive, was " + idleFor);
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("compact on table '" + table + "': batchSize must be at least 1, was "
                    + batchSize);
        }
        Objects.requireNonNull(issuer, "compact on table '" + table + "': issuer (IssuerFloors.ONE_SEQUENCE for an "
                + "issuer with one sequence for every resource)");
        store.verifyTable();
        Object cutoff = cutoff(idleFor);
        long folded = 0;
        int batches = 0;
        Set<String> families = new HashSet<>();
        int idleRounds = 0;
        // the issuer as the compaction is given it, when it can also say what it handed out (the JDBC lease)
        IssuedTokens issued = issuer instanceof IssuedTokens tokens ? tokens : null;
        Map<String, Fold> unissued = new LinkedHashMap<>();
        while (true) {
            List<Fold> candidates = idleRows(cutoff, batchSize + unissued.size()).stream()
                    .filter(f -> !unissued.containsKey(f.resource)).limit(batchSize).toList();
            if (issued != null) {
                candidates = withoutUnissued(candidates, issued, unissued);
            }
            if (candidates.isEmpty()) {
                break;
            }
            Map<String, Long> told = highestPerFamily(candidates);
            told.forEach(issuer::raiseFamilyFloor);
            Batch batch = foldBatch(candidates, told, cutoff, folded);
            batches++;
            folded += batch.folded.size();
            families.addAll(highestPerFamily(batch.folded).keySet());
            if (batch.folded.isEmpty() && ++idleRounds >= IDLE_ROUNDS) {
                break;
            }
            if (!batch.folded.isEmpty()) {
                idleRounds = 0;
            }
        }
        if (folded > 0) {
            LOG.log(System.Logger.Level.INFO, "Compaction of table '" + table + "': " + folded
                    + " idle resources folded into the floors of " + families.size() + " families in "
                    + batches + " batches");
        }
        if (!unissued.isEmpty()) {
            LOG.log(System.Logger.Level.WARNING, "Compaction of table '" + table + "' left " + unissued.size()
                    + " resources unfolded, whose max_seen is above every token their issuer handed out (a token "
                    + "forged or made by hand reached the fence): "
                    + unissued.values().stream().limit(10).map(f -> "'" + f.resource + "' ("
                    + f.maxSeen + ")").collect(java.util.stream.Collectors.joining(", "))
                    + (unissued.size() > 10 ? ", ..." : "") + ". Folded, each would raise its family's floor above "
                    + "every real token and lock out every resource of the family. Lower each with the max_seen "
                    + "reset (docs/operations.md), and sign tokens (docs/signing.md) or bound each advance "
                    + "(maxAdvance)");
        }
        return folded == 0 && batches == 0 ? CompactionResult.NONE
                : new CompactionResult(folded, batches, families.size());
    }

    /** The database's time less {@code idleFor}, in the type its driver returns (bound back as it is). */
    private Object cutoff(Duration idleFor) {
        Object now = store.jdbc().queryForObject(sql.nowSql(), (rs, n) -> rs.getObject(1));
        if (now instanceof OffsetDateTime t) {
            return t.minus(idleFor);
        }
        if (now instanceof LocalDateTime t) {
            return t.minus(idleFor);
        }
        if (now instanceof Timestamp t) {
            return Timestamp.valueOf(t.toLocalDateTime().minus(idleFor));
        }
        if (now instanceof java.time.Instant t) {
            return Timestamp.from(t.minus(idleFor));
        }
        throw new IllegalStateException("compact on table '" + table + "': the database's time came as "
                + (now == null ? "null" : now.getClass().getName()) + ", which this compaction cannot subtract from");
    }

    private List<Fold> idleRows(Object cutoff, int limit) {
        return store.jdbc().query(sql.idleRowsSql(table, limit), ps -> {
            ps.setObject(1, cutoff);
            ps.setString(2, "%" + FenceSql.FLOOR_MARKER);
        }, (rs, n) -> new Fold(rs.getString(1), rs.getLong(2))).stream()
                .filter(f -> !FenceSql.isFloorKey(f.resource) && ResourceFamily.of(f.resource) != null)
                .toList();
    }

    /**
     * {@code candidates} without the rows whose max_seen is above every token {@code issued} handed out for their
     * resource, which are added to {@code unissued}. Only the highest rows of each family are asked about (one read
     * each): a row below an issued one cannot raise the floor above an issued token.
     */
    private static List<Fold> withoutUnissued(List<Fold> candidates, IssuedTokens issued, Map<String, Fold> unissued) {
        Map<String, List<Fold>> byFamily = new LinkedHashMap<>();
        for (Fold row : candidates) {
            byFamily.computeIfAbsent(ResourceFamily.of(row.resource), f -> new ArrayList<>()).add(row);
        }
        List<Fold> kept = new ArrayList<>(candidates.size());
        for (List<Fold> rows : byFamily.values()) {
            rows.sort(java.util.Comparator.comparingLong(Fold::maxSeen).reversed());
            int first = 0;
            while (first < rows.size() && rows.get(first).maxSeen > issued.highestIssued(rows.get(first).resource)) {
                unissued.put(rows.get(first).resource, rows.get(first));
                first++;
            }
            kept.addAll(rows.subList(first, rows.size()));
        }
        return kept;
    }

    private static Map<String, Long> highestPerFamily(List<Fold> rows) {
        Map<String, Long> highest = new LinkedHashMap<>();
        for (Fold row : rows) {
            highest.merge(ResourceFamily.of(row.resource), row.maxSeen, Math::max);
        }
        return highest;
    }

    /**
     * One batch in one transaction, after the table lock; tried again when the lock is not granted in time. On H2,
     * which has no table lock statement, the floors are raised and committed first, then the batch waits out every
     * check statement that could still judge against the old floors (each waits at most the store's lock wait bound
     * for a row), then deletes in a second transaction.
     */
    private Batch foldBatch(List<Fold> candidates, Map<String, Long> told, Object cutoff, long foldedSoFar) {
        boolean tableLock = !sql.lockForCompactionSql(table, LOCK_TIMEOUT).isEmpty();
        if (!tableLock) {
            inTransaction(c -> raiseFloors(c, told), foldedSoFar);
            sleep(store.lockTimeout().toMillis() + GRACE_MILLIS);
        }
        return inTransaction(c -> fold(c, candidates, told, cutoff, tableLock), foldedSoFar);
    }

    /** Extra wait, on H2, beyond the lock wait bound of the check statements that may have read the old floors. */
    private static final long GRACE_MILLIS = 100;

    private interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    private <T> T inTransaction(Work<T> work, long foldedSoFar) {
        DataSource dataSource = Objects.requireNonNull(store.jdbc().getDataSource(), "data source");
        SQLException last = null;
        for (int attempt = 1; attempt <= LOCK_ATTEMPTS; attempt++) {
            try (Connection c = dataSource.getConnection()) {
                boolean autoCommit = c.getAutoCommit();
                c.setAutoCommit(false);
                try {
                    T done = work.run(c);
                    c.commit();
                    return done;
                } catch (SQLException e) {
                    c.rollback();
                    if (!lockNotGranted(e)) {
                        throw store.jdbc().getExceptionTranslator().translate("compact on table '" + table + "'",
                                null, e);
                    }
                    last = e;
                } finally {
                    String unlock = sql.unlockSql();
                    if (unlock != null) {
                        try (Statement s = c.createStatement()) {
                            s.execute(unlock);
                        }
                    }
                    c.setAutoCommit(autoCommit);
                }
            } catch (SQLException e) {
                throw store.jdbc().getExceptionTranslator().translate("compact on table '" + table + "'", null, e);
            }
            sleep(attempt * 40L + ThreadLocalRandom.current().nextLong(40));
        }
        throw new CannotAcquireLockException("Compaction of table '" + table + "' stopped: the table lock was not "
                + "granted within " + LOCK_TIMEOUT.toMillis() + " ms in " + LOCK_ATTEMPTS + " attempts (a fenced "
                + "transaction stayed open that long); this batch deleted nothing, " + foldedSoFar
                + " resources were folded before it; run the compaction again later", last);
    }

    private Batch fold(Connection c, List<Fold> candidates, Map<String, Long> told, Object cutoff, boolean tableLock)
            throws SQLException {
        if (tableLock) {
            try (Statement s = c.createStatement()) {
                for (String lock : sql.lockForCompactionSql(table, LOCK_TIMEOUT)) {
                    s.execute(lock);
                }
            }
        }
        List<Fold> fold = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql.stillIdleSql(table, candidates.size()))) {
            ps.setObject(1, cutoff);
            for (int i = 0; i < candidates.size(); i++) {
                ps.setString(i + 2, candidates.get(i).resource);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Fold row = new Fold(rs.getString(1), rs.getLong(2));
                    // advanced since the issuer was told (PostgreSQL stamps a row with its transaction's start):
                    // kept for a later batch, which tells the issuer its new max_seen first
                    if (row.maxSeen <= told.get(ResourceFamily.of(row.resource))) {
                        fold.add(row);
                    }
                }
            }
        }
        if (fold.isEmpty()) {
            return new Batch(fold);
        }
        if (!tableLock) {
            return new Batch(deleteStillIdle(c, fold, told, cutoff));
        }
        try (PreparedStatement ps = c.prepareStatement(sql.deleteRowsSql(table, fold.size()))) {
            for (int i = 0; i < fold.size(); i++) {
                ps.setString(i + 1, fold.get(i).resource);
            }
            ps.executeUpdate();
        }
        raiseFloors(c, highestPerFamily(fold));
        return new Batch(fold);
    }

    /**
     * Without a table lock (H2), row by row: a check may have advanced a row since it was read as idle and hold it
     * until its commit, which the delete waits for; the delete then finds the row above its family's floor (or no
     * longer idle) and keeps it. Answers the rows deleted.
     */
    private List<Fold> deleteStillIdle(Connection c, List<Fold> fold, Map<String, Long> told, Object cutoff)
            throws SQLException {
        List<Fold> deleted = new ArrayList<>(fold.size());
        try (PreparedStatement ps = c.prepareStatement(sql.deleteRowIfStillIdleSql(table))) {
            for (Fold row : fold) {
                ps.setString(1, row.resource);
                ps.setLong(2, told.get(ResourceFamily.of(row.resource)));
                ps.setObject(3, cutoff);
                if (ps.executeUpdate() > 0) {
                    deleted.add(row);
                }
            }
        }
        return deleted;
    }

    private Void raiseFloors(Connection c, Map<String, Long> floors) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.raiseFloorRowSql(table))) {
            for (Map.Entry<String, Long> floor : floors.entrySet()) {
                ps.setString(1, FenceSql.familyFloorKey(floor.getKey()));
                ps.setLong(2, floor.getValue());
                ps.executeUpdate();
            }
        }
        return null;
    }

    /**
     * The table lock was not granted in time, or the database gave up the batch to resolve a conflict: PostgreSQL's
     * lock_not_available (55P03), MariaDB's lock wait timeout (1205), H2's (50200), or a serialization failure or
     * deadlock (SQLSTATE class 40).
     */
    private static boolean lockNotGranted(SQLException e) {
        String state = e.getSQLState();
        return "55P03".equals(state) || e.getErrorCode() == 1205 || e.getErrorCode() == 50200
                || (state != null && state.startsWith("40"));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("compaction interrupted", e);
        }
    }

    /** A resource's row as a batch reads it. */
    private record Fold(String resource, long maxSeen) {
    }

    /** The rows one batch folded. */
    private record Batch(List<Fold> folded) {
    }
}

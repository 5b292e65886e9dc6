package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.dao.TransientDataAccessResourceException;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * When {@link TableVerifier} runs a step of its startup check again: after a lock conflict (deadlock, lock wait
 * timeout, serialization failure), a bounded number of times, and never after any other failure. The probe is
 * scripted; the table is a real one on the embedded H2, and the pauses between attempts are recorded, not slept.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class TableVerifierRetryTest {

    private final HikariDataSource pool = Database.H2.newPool(2);
    private final JdbcTemplate admin = new JdbcTemplate(pool);
    private final List<String> tables = new ArrayList<>();
    private final List<Long> pauses = new ArrayList<>();

    @AfterAll
    void close() {
        tables.forEach(t -> admin.execute("DROP TABLE IF EXISTS " + t));
        pool.close();
    }

    private String fenceTable() {
        String table = Database.uniqueTable("retry");
        tables.add(table);
        admin.execute(JdbcDialect.H2.createTableSql(table));
        return table;
    }

    private TableVerifier verifier(String table, boolean create, JdbcTemplate jdbc, TableVerifier.Probe probe) {
        TableVerifier verifier = new TableVerifier(JdbcTable.FENCE, JdbcDialect.H2, table, create, jdbc,
                new DataSourceTransactionManager(pool), probe, () -> "");
        pauses.clear();
        verifier.pause = pauses::add;
        return verifier;
    }

    /** A probe whose first {@code failures} writes throw what {@code failure} gives, the others pass. */
    private static final class ScriptedProbe implements TableVerifier.Probe {
        final AtomicInteger writes = new AtomicInteger();
        final List<String> resources = new ArrayList<>();
        private final int failures;
        private final RuntimeException failure;

        ScriptedProbe(int failures, RuntimeException failure) {
            this.failures = failures;
            this.failure = failure;
        }

        @Override
        public void write(String resource) {
            resources.add(resource);
            if (writes.incrementAndGet() <= failures) {
                throw failure;
            }
        }

        @Override
        public boolean sharesRow(String resource) {
            resources.add(resource);
            return false;
        }
    }

    private static RuntimeException mariaDbDeadlock() {
        return new UncategorizedSQLException("probe", "INSERT INTO fence ...",
                new SQLException("Deadlock found when trying to get lock; try restarting transaction", "40001", 1213));
    }

    @Test
    void aProbeThatDeadlocksOnceIsRunAgainAndTheTablePasses() {
        ScriptedProbe probe = new ScriptedProbe(1, mariaDbDeadlock());
        TableVerifier verifier = verifier(fenceTable(), false, admin, probe);
        verifier.verify();
        assertThat(verifier.isVerified()).isTrue();
        assertThat(probe.writes).hasValue(3);
        assertThat(pauses).hasSize(1).allSatisfy(p -> assertThat(p).isBetween(20L, 39L));
        // the failed attempt stopped at its first write; the second one probed the same resource, then its variants
        // (and wrote a composed one whose decomposed spelling it probes)
        assertThat(probe.resources).hasSize(8);
        assertThat(probe.resources.get(0)).isEqualTo(probe.resources.get(1));
    }

    @Test
    void aProbeThatAlwaysDeadlocksFailsAfterTheLastAttemptNamingTheLockConflict() {
        String table = fenceTable();
        ScriptedProbe probe = new ScriptedProbe(Integer.MAX_VALUE, mariaDbDeadlock());
        TableVerifier verifier = verifier(table, false, admin, probe);
        Throwable thrown = catchThrowable(verifier::verify);
        assertThat(thrown).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Fence table '" + table + "' on H2")
                .hasMessageContaining("lock conflict")
                .hasMessageContaining("after " + TableVerifier.LOCK_ATTEMPTS + " attempts")
                .hasMessageContaining("Deadlock found")
                .hasRootCauseInstanceOf(SQLException.class);
        assertThat(verifier.isVerified()).isFalse();
        assertThat(probe.writes).hasValue(TableVerifier.LOCK_ATTEMPTS);
        assertThat(pauses).hasSize(TableVerifier.LOCK_ATTEMPTS - 1);
        assertThat(pauses.get(pauses.size() - 1)).isGreaterThan(pauses.get(0));
    }

    @Test
    void anyOtherFailureOfTheProbeFailsAtOnce() {
        String table = fenceTable();
        ScriptedProbe probe = new ScriptedProbe(Integer.MAX_VALUE, new BadSqlGrammarException("probe",
                "INSERT INTO fence ...", new SQLException("Table not found", "42S02", 42102)));
        TableVerifier verifier = verifier(table, false, admin, probe);
        assertThat(catchThrowable(verifier::verify)).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Fence table '" + table + "' is missing or unusable on H2 (Table not found)")
                .hasMessageNotContaining("attempts");
        assertThat(probe.writes).hasValue(1);
        assertThat(pauses).isEmpty();
    }

    @Test
    void aCreateTableThatLosesALockConflictIsRunAgain() {
        String table = Database.uniqueTable("retrycreate");
        tables.add(table);
        AtomicInteger creates = new AtomicInteger();
        JdbcTemplate failingOnce = new JdbcTemplate(pool) {
            @Override
            public void execute(String sql) {
                if (sql.startsWith("CREATE") && creates.incrementAndGet() == 1) {
                    throw new CannotAcquireLockException("CREATE TABLE",
                            new SQLException("Lock wait timeout exceeded; try restarting transaction", "HY000", 1205));
                }
                super.execute(sql);
            }
        };
        ScriptedProbe probe = new ScriptedProbe(0, null);
        TableVerifier verifier = verifier(table, true, failingOnce, probe);
        verifier.verify();
        assertThat(creates).hasValue(2);
        assertThat(pauses).hasSize(1);
        assertThat(probe.writes).hasValue(2);
    }

    @Test
    void whatCountsAsALockConflict() {
        assertThat(TableVerifier.isLockConflict(mariaDbDeadlock())).isTrue();
        assertThat(TableVerifier.isLockConflict(new UncategorizedSQLException("probe", "SELECT ... FOR UPDATE",
                new SQLException("Lock wait timeout exceeded", "HY000", 1205)))).isTrue();
        assertThat(TableVerifier.isLockConflict(new RuntimeException("wrapped", new UncategorizedSQLException("x",
                "y", new SQLException("deadlock detected", "40P01"))))).isTrue();
        assertThat(TableVerifier.isLockConflict(new UncategorizedSQLException("x", "y",
                new SQLException("could not serialize access", "40001")))).isTrue();
        assertThat(TableVerifier.isLockConflict(new PessimisticLockingFailureException("deadlock"))).isTrue();
        assertThat(TableVerifier.isLockConflict(new CannotAcquireLockException("lock wait"))).isTrue();
        assertThat(TableVerifier.isLockConflict(new FenceConflictException("r", new FencingToken("r", 2, "h"),
                "aborted", mariaDbDeadlock()))).isTrue();

        assertThat(TableVerifier.isLockConflict(new BadSqlGrammarException("x", "y",
                new SQLException("relation does not exist", "42P01")))).isFalse();
        assertThat(TableVerifier.isLockConflict(new DataIntegrityViolationException("duplicate",
                new SQLException("duplicate key", "23505")))).isFalse();
        assertThat(TableVerifier.isLockConflict(new QueryTimeoutException("slow"))).isFalse();
        assertThat(TableVerifier.isLockConflict(new TransientDataAccessResourceException("connection",
                new SQLTransientConnectionException("gone", "08006")))).isFalse();
        // PostgreSQL's concurrent CREATE TABLE IF NOT EXISTS race: run again only when creating the table
        assertThat(TableVerifier.isCreateConflict(new DataIntegrityViolationException("duplicate",
                new SQLException("duplicate key value violates unique constraint \"pg_type_typname_nsp_index\"",
                        "23505")))).isTrue();
        assertThat(TableVerifier.isCreateConflict(new BadSqlGrammarException("x", "y",
                new SQLException("relation already exists", "42P07")))).isTrue();
        assertThat(TableVerifier.isCreateConflict(new UncategorizedSQLException("x", "y",
                new SQLException("type \"fence_x\" already exists", "42710")))).isTrue();
        assertThat(TableVerifier.isCreateConflict(new BadSqlGrammarException("x", "y",
                new SQLException("permission denied", "42501")))).isFalse();
    }

    @Test
    void everyVerifierProbesResourcesOfItsOwnThatFitTheColumns() {
        ScriptedProbe first = new ScriptedProbe(0, null);
        ScriptedProbe second = new ScriptedProbe(0, null);
        verifier(fenceTable(), false, admin, first).verify();
        verifier(fenceTable(), false, admin, second).verify();
        String resource = first.resources.get(0);
        assertThat(resource).startsWith(TableVerifier.PROBE).endsWith(":Ab")
                .isNotEqualTo(second.resources.get(0));
        assertThat(resource.indexOf("Ab")).isEqualTo(resource.length() - 2);
        assertThat(first.resources).containsExactly(resource, resource.replace(":Ab", ":aB"), resource + " ",
                resource.replace(":Ab", ":\u00c4b"), resource.replace(":Ab", ":\u00c5b"),
                resource.replace(":Ab", ":A\u030ab"), resource.replace(":Ab", ":A\u200bb"));
        assertThat(TableVerifier.probeResource(Long.MAX_VALUE).length() + 1)
                .isLessThanOrEqualTo(FencingToken.MAX_PART_LENGTH);
    }
}

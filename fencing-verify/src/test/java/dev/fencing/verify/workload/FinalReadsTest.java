package dev.fencing.verify.workload;

import dev.fencing.verify.history.CommitRow;
import dev.fencing.verify.history.History;
import dev.fencing.verify.history.HistoryReader;
import dev.fencing.verify.history.HistoryWriter;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;
import dev.fencing.verify.run.RunConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The run's tables over several resources on the test PostgreSQL and what the runner reads from them at the end:
 * one final read per resource, each with its own operation index, and the append log as commit rows in sequence
 * order.
 */
@Timeout(30)
class FinalReadsTest {

    @TempDir
    Path dir;

    private final LockSetTables tables = new LockSetTables(RunConfig.DEFAULT_JDBC_URL, "postgres",
            "verify_test_" + Long.toHexString(System.nanoTime()));

    @AfterEach
    void drop() {
        java.sql.SQLException error = tables.drop();
        assertThat(error == null ? "dropped" : error.getMessage()).isEqualTo("dropped");
    }

    @Test
    void everySetAndEveryCounterGetsItsOwnFinalRead() throws Exception {
        tables.create(3);
        sql("UPDATE " + tables.set() + " SET elements = '5,6' WHERE id = 2",
                "UPDATE " + tables.counter() + " SET value = 9 WHERE id = 1");
        List<Op> sets = reads("lock-set", 3);
        assertThat(sets).extracting(Op::resource).containsExactly("set-0", "set-1", "set-2");
        assertThat(sets).extracting(Op::index).containsExactly(0L, 1L, 2L);
        assertThat(sets.get(2).value()).isEqualTo(List.of(5L, 6L));
        assertThat(sets.get(0).value()).isEqualTo(List.of());
        List<Op> counters = reads("counter", 3);
        assertThat(counters).extracting(Op::resource).containsExactly("counter-0", "counter-1", "counter-2");
        assertThat(counters).extracting(Op::longValue).containsExactly(0L, 9L, 0L);
    }

    @Test
    void oneResourceKeepsTheBareName() throws Exception {
        tables.create(1);
        assertThat(reads("lock-set", 1)).extracting(Op::resource).containsExactly("set");
    }

    @Test
    void theAppendLogIsReadInSequenceOrder() throws Exception {
        tables.create(2);
        sql("INSERT INTO " + tables.append() + " (resource, token, process, op) VALUES ('append-1', 7, 1, 1)",
                "INSERT INTO " + tables.append() + " (resource, token, process, op) VALUES ('append-0', 9, 2, 3)",
                "INSERT INTO " + tables.append() + " (resource, token, process, op) VALUES ('append-1', NULL, 3, 5)");
        Path file = dir.resolve("append.jsonl");
        try (HistoryWriter history = HistoryWriter.open(file)) {
            FinalReads.record("append", 2, tables, history);
        }
        History h = HistoryReader.read(file);
        assertThat(h.ops()).isEmpty();
        assertThat(h.commits()).extracting(CommitRow::resource, CommitRow::token, CommitRow::process, CommitRow::op)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("append-1", 7L, 1, 1L),
                        org.assertj.core.groups.Tuple.tuple("append-0", 9L, 2, 3L),
                        org.assertj.core.groups.Tuple.tuple("append-1", null, 3, 5L));
        assertThat(h.commits().get(0).seq()).isLessThan(h.commits().get(1).seq());
    }

    @Test
    void aResourceCountOutsideTheLimitsIsRefused() {
        assertThatThrownBy(() -> tables.create(0)).hasMessageContaining("resources must be 1 to 1000, got 0");
        assertThatThrownBy(() -> Resources.name("set", 4, 4)).hasMessageContaining("resource row 4 outside 0..3");
        assertThat(Resources.name("set", 3, 4)).isEqualTo("set-3");
    }

    private List<Op> reads(String workload, int resources) throws Exception {
        Path file = dir.resolve(workload + ".jsonl");
        try (HistoryWriter history = HistoryWriter.open(file)) {
            FinalReads.record(workload, resources, tables, history);
        }
        List<Op> ops = HistoryReader.read(file).ops();
        assertThat(ops).filteredOn(o -> o.type() == OpType.INVOKE).hasSize(resources);
        return ops.stream().filter(o -> o.type() == OpType.OK).toList();
    }

    private void sql(String... statements) throws Exception {
        try (Connection c = DriverManager.getConnection(RunConfig.DEFAULT_JDBC_URL, "postgres", "");
             Statement s = c.createStatement()) {
            for (String statement : statements) {
                s.execute(statement);
            }
        }
    }
}

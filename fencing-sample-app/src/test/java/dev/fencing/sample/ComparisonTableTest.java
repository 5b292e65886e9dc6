package dev.fencing.sample;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** The default table end to end: unfenced strategies are corrupted by the zombie, fenced ones block it. */
class ComparisonTableTest {

    @Test
    void theDefaultTableMeasuresWhoStopsTheZombie() throws Throwable {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        List<Row> rows;
        try (PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
            rows = ComparisonTable.run(Options.parse(), out);
        }
        String printed = buffer.toString(StandardCharsets.UTF_8);
        // by first word, except the two Redisson rows, by their full names
        Map<String, Row> byName = rows.stream().collect(Collectors.toMap(
                r -> r.strategy().startsWith("Redisson") ? r.strategy() : r.strategy().split(" ")[0],
                Function.identity()));

        Row lease = byName.get("Lease");
        assertThat(lease.ran()).isTrue();
        assertThat(lease.blocked()).isFalse();
        assertThat(lease.finalData()).isEqualTo("Y");

        Row redis = byName.get("Redis"); // the CI machine runs Redis on 127.0.0.1:6379
        assertThat(redis.ran()).as(redis.skipped()).isTrue();
        assertThat(redis.monotonic()).isFalse();
        assertThat(redis.blocked()).isFalse();
        assertThat(redis.finalData()).isEqualTo("Y");

        Row unchecked = byName.get("Redisson RFencedLock, token unchecked"); // the same Redis
        assertThat(unchecked.ran()).as(unchecked.skipped()).isTrue();
        assertThat(unchecked.monotonic()).as("Redisson's token is monotonic ...").isTrue();
        assertThat(unchecked.blocked()).as("... but nobody checks it").isFalse();
        assertThat(unchecked.finalData()).isEqualTo("Y");

        Row redisson = byName.get("Redisson RFencedLock + fence");
        assertThat(redisson.ran()).as(redisson.skipped()).isTrue();
        assertThat(redisson.monotonic()).isTrue();
        assertThat(redisson.blocked()).isTrue();
        assertThat(redisson.finalData()).isEqualTo("X");

        Row zookeeper = byName.get("ZooKeeper");
        assertThat(zookeeper.ran()).as(zookeeper.skipped()).isTrue();
        assertThat(zookeeper.monotonic()).isTrue();
        assertThat(zookeeper.blocked()).isTrue();
        assertThat(zookeeper.finalData()).isEqualTo("X");

        Row etcd = byName.get("etcd");
        if (etcd.ran()) {
            assertThat(etcd.blocked()).isTrue();
            assertThat(etcd.finalData()).isEqualTo("X");
        } else {
            assertThat(etcd.skipped()).contains("no etcd at http://127.0.0.1:2379");
        }

        Row hazelcast = byName.get("Hazelcast");
        assertThat(hazelcast.ran()).as(hazelcast.skipped()).isTrue();
        assertThat(hazelcast.monotonic()).isTrue();
        assertThat(hazelcast.blocked()).isTrue();
        assertThat(hazelcast.finalData()).isEqualTo("X");

        Row fenced = byName.get("Fencing");
        assertThat(fenced.ran()).as(fenced.skipped()).isTrue();
        assertThat(fenced.monotonic()).isTrue();
        assertThat(fenced.blocked()).isTrue();
        assertThat(fenced.finalData()).isEqualTo("X");

        assertThat(ComparisonTable.exitCode(rows)).isZero();
        assertThat(printed).contains("produces monotonic token?", "stale write blocked?", "REJECTED", "NO (corrupted)");
    }

    @Test
    void aFencedStrategyThatLetTheZombieThroughFailsTheRun() {
        Row leaked = new Row("Fencing token + JDBC store", true, "1, 2", true, false, "Y", null);
        Row fine = new Row("ZooKeeper lock + czxid", true, "1, 2", true, true, "X", null);
        Row unfenced = new Row("Lease + trust the client", false, "none", false, false, "Y", null);
        assertThat(ComparisonTable.exitCode(List.of(unfenced, fine))).isZero();
        assertThat(ComparisonTable.exitCode(List.of(unfenced, fine, leaked))).isEqualTo(1);
        assertThat(ComparisonTable.exitCode(List.of(unfenced, Row.skipped("etcd", true, "none")))).isEqualTo(1);
    }
}

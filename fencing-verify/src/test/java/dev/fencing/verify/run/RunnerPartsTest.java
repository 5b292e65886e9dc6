package dev.fencing.verify.run;

import dev.fencing.verify.client.ClientSettings;
import dev.fencing.verify.history.History;
import dev.fencing.verify.history.HistoryReader;
import dev.fencing.verify.history.HistoryWriter;
import dev.fencing.verify.history.NemesisEvent;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;
import dev.fencing.verify.workload.SetCodec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The runner's pieces that need no processes: client arguments, the set's text form, the merge of histories. */
class RunnerPartsTest {

    @Test
    void clientSettingsSurviveTheCommandLine() {
        ClientSettings s = new ClientSettings(7, Path.of("target/x/client-7.jsonl"), "jdbc:postgresql://h/db", "u",
                "f", "l", "s", Duration.ofMillis(1500), false, Duration.ofMillis(20), 42, false, "jdbc-postgresql", "",
                "counter", 4, true, false);
        assertThat(ClientSettings.parse(s.toArgs())).isEqualTo(s);
        ClientSettings zk = new ClientSettings(8, Path.of("target/x/client-8.jsonl"), "jdbc:postgresql://h/db", "u",
                "f", "l", "s", Duration.ofMillis(1000), true, Duration.ofMillis(20), 43, true, "zookeeper",
                "127.0.0.1:2181,127.0.0.1:2182", "lock-set", 1, false, true);
        assertThat(ClientSettings.parse(zk.toArgs())).isEqualTo(zk);
    }

    @Test
    void theSetRowRoundTrips() {
        assertThat(SetCodec.decode("")).isEmpty();
        assertThat(SetCodec.decode(SetCodec.encode(List.of(1000001L, 2000001L, 3L)))).containsExactly(1000001L,
                2000001L, 3L);
    }

    @Test
    void mergeOrdersEveryProcessByMonotonicTimeAndCountsTruncatedLines(@TempDir Path dir) throws Exception {
        Path a = dir.resolve("client-1.jsonl");
        Path b = dir.resolve("client-2.jsonl");
        Path r = dir.resolve("runner.jsonl");
        try (HistoryWriter w = HistoryWriter.open(a)) {
            w.write(new Op(OpType.INVOKE, 1, 0, "acquire", "set", null, null, null, 1, 10));
            w.write(new Op(OpType.OK, 1, 0, "acquire", "set", 3L, null, null, 4, 40));
        }
        Files.writeString(b, "{\"type\":\"invoke\",\"process\":2,\"index\":0,\"f\":\"acquire\",\"resource\":\"set\","
                + "\"wall\":2,\"mono\":20}\n{\"type\":\"ok\",\"proc");      // killed mid-line
        try (HistoryWriter w = HistoryWriter.open(r)) {
            w.write(new NemesisEvent("start", "pause", "client-1", 3, 30));
        }
        History merged = Runner.merge(dir, List.of(a, b, dir.resolve("client-3.jsonl")), r);
        assertThat(merged.truncatedLines()).isEqualTo(1);
        assertThat(merged.events()).hasSize(4);
        History reread = HistoryReader.read(dir.resolve("history.jsonl"));
        assertThat(reread.events()).containsExactlyElementsOf(merged.events());
        assertThat(reread.ops()).extracting(Op::mono).containsExactly(10L, 20L, 40L);
        assertThat(reread.nemesisEvents()).hasSize(1);
    }
}

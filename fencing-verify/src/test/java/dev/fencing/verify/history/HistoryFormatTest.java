package dev.fencing.verify.history;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HistoryFormatTest {

    @Test
    void eachKindOfEventSurvivesTheLineFormat() {
        List<HistoryEvent> events = List.of(
                new Op(OpType.INVOKE, 3, 17, "add", "set", null, 42L, null, 1_700_000_000_123L, 5_000_000_001L),
                new Op(OpType.OK, 3, 17, "add", "set", 12L, 42L, null, 1_700_000_000_130L, 5_007_000_000L),
                new Op(OpType.OK, 1, 2, "read", "set", 13L, List.of(1L, 42L), null, 1L, 2L),
                new Op(OpType.FAIL, 2, 0, "add", "set", 11L, 7L, "stale: max_seen 12", 1L, 2L),
                new Op(OpType.INFO, 2, 1, "increment", "counter", null, null, "timeout", 1L, 2L),
                new NemesisEvent("start", "pause", "client-3", 1L, 2L),
                new NemesisEvent("stop", "partition", null, 1L, 2L),
                new CommitRow(5, "log", 12L, 3, 17),
                new CommitRow(6, "log", null, 4, 0));
        for (HistoryEvent event : events) {
            assertThat(HistoryJson.fromLine(HistoryJson.toLine(event))).isEqualTo(event);
        }
    }

    @Test
    void integralValuesAreLongsWhateverWasPassed() {
        Op added = new Op(OpType.OK, 1, 0, "add", "set", 1L, 42, null, 1L, 2L);
        Op read = new Op(OpType.OK, 2, 0, "read", "set", null, List.of(41, 42L), null, 1L, 2L);
        assertThat(added.value()).isEqualTo(42L);
        assertThat(read.value()).isEqualTo(List.of(41L, 42L));
        assertThat(HistoryJson.fromLine(HistoryJson.toLine(read))).isEqualTo(read);
    }

    @Test
    void theLineFormatIsTheDocumentedOne() {
        Op ok = new Op(OpType.OK, 3, 17, "add", "set", 12L, 42L, null, 1_700_000_000_130L, 5_007_000_000L);
        assertThat(HistoryJson.toLine(ok)).isEqualTo("{\"type\":\"ok\",\"process\":3,\"index\":17,\"f\":\"add\","
                + "\"resource\":\"set\",\"token\":12,\"value\":42,\"wall\":1700000000130,\"mono\":5007000000}");
        assertThat(HistoryJson.toLine(new NemesisEvent("start", "pause", "client-3", 1L, 2L)))
                .isEqualTo("{\"type\":\"nemesis\",\"f\":\"start\",\"nemesis\":\"pause\",\"target\":\"client-3\","
                        + "\"wall\":1,\"mono\":2}");
        assertThat(HistoryJson.toLine(new CommitRow(5, "log", 12L, 3, 17)))
                .isEqualTo("{\"type\":\"commit\",\"seq\":5,\"resource\":\"log\",\"token\":12,\"process\":3,\"op\":17}");
    }

    @Test
    void aLineThatIsNotAnEventSaysWhy() {
        assertThatThrownBy(() -> HistoryJson.fromLine("{\"type\":\"ok\",\"process\":1}"))
                .hasMessageContaining("missing 'index'");
        assertThatThrownBy(() -> HistoryJson.fromLine("{\"type\":\"bogus\"}")).hasMessageContaining("unknown type");
        assertThatThrownBy(() -> HistoryJson.fromLine("[1]")).hasMessageContaining("not a JSON object");
        assertThatThrownBy(() -> HistoryJson.fromLine("{\"type\":\"nemesis\",\"f\":\"begin\",\"nemesis\":\"pause\","
                + "\"wall\":1,\"mono\":2}")).hasMessageContaining("start or stop");
    }

    @Test
    void concurrentWritersNeverInterleaveLines(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("history.jsonl");
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try (HistoryWriter writer = HistoryWriter.open(file)) {
            List<Future<?>> done = new ArrayList<>();
            for (int p = 0; p < 8; p++) {
                int process = p;
                done.add(pool.submit(() -> {
                    for (long i = 0; i < 500; i++) {
                        writer.write(new Op(OpType.INVOKE, process, i, "add", "set", null, List.of(i, i + 1), null,
                                System.currentTimeMillis(), System.nanoTime()));
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        History history = HistoryReader.read(file);
        assertThat(history.truncatedLines()).isZero();
        assertThat(history.ops()).hasSize(4000);
        Set<List<Long>> keys = new HashSet<>();
        history.ops().forEach(op -> keys.add(List.of((long) op.process(), op.index())));
        assertThat(keys).hasSize(4000);
    }

    @Test
    void eachWriteIsOnDiskWhenItReturnsAndReopeningAppends(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("history.jsonl");
        HistoryWriter writer = HistoryWriter.open(file);
        writer.write(new NemesisEvent("start", "kill", "client-1", 1L, 2L));
        assertThat(Files.readAllLines(file)).hasSize(1);          // not closed: already there
        writer.close();
        try (HistoryWriter again = HistoryWriter.open(file)) {
            again.write(new NemesisEvent("stop", "kill", "client-1", 3L, 4L));
        }
        assertThat(HistoryReader.read(file).nemesisEvents()).hasSize(2);
    }

    @Test
    void aTruncatedLastLineIsDroppedAndCounted() {
        String text = HistoryJson.toLine(new CommitRow(1, "a", 1L, 1, 0)) + "\n"
                + "{\"type\":\"ok\",\"process\":1,\"ind";
        History history = HistoryReader.parse(text);
        assertThat(history.events()).hasSize(1);
        assertThat(history.truncatedLines()).isEqualTo(1);
    }

    @Test
    void anUnreadableLineElsewhereIsAnErrorWithItsLineNumber() {
        String line = HistoryJson.toLine(new CommitRow(1, "a", 1L, 1, 0));
        assertThatThrownBy(() -> HistoryReader.parse(line + "\n\n{oops\n" + line + "\n"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("history line 3: ");
        assertThatThrownBy(() -> HistoryReader.parse(line + "\n{oops\n"))
                .as("a complete last line (with its line break) is not a truncated one")
                .hasMessageStartingWith("history line 2: ");
    }

    @Test
    @Timeout(10)
    void anOperationEventThatContradictsTheOthersIsAnErrorWithItsLineNumber() {
        String invoke = HistoryJson.toLine(new Op(OpType.INVOKE, 1, 0, "add", "set", null, 1L, null, 1L, 1L));
        String ok = HistoryJson.toLine(new Op(OpType.OK, 1, 0, "add", "set", 5L, 1L, null, 2L, 2L));
        String fail = HistoryJson.toLine(new Op(OpType.FAIL, 1, 0, "add", "set", 5L, 1L, "stale", 3L, 3L));
        // a later fail of the same operation would replace its ok (and hide a lost write)
        assertThatThrownBy(() -> HistoryReader.parse(invoke + "\n" + ok + "\n" + fail + "\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("history line 3: a second completion of process 1 op 0 (the first is on line 2)");
        assertThatThrownBy(() -> HistoryReader.parse(invoke + "\n" + invoke + "\n" + ok + "\n"))
                .hasMessage("history line 2: a second invocation of process 1 op 0 (the first is on line 1)");
        // an ok without its invocation would be left out of the issuer check (a duplicate grant hidden)
        assertThatThrownBy(() -> HistoryReader.parse(invoke + "\n" + ok + "\n"
                + ok.replace("\"process\":1", "\"process\":2") + "\n"))
                .hasMessage("history line 3: a completion of process 2 op 0 that was never invoked");
        assertThat(HistoryReader.parse(invoke + "\n" + ok + "\n").ops()).hasSize(2);
    }

    @Test
    @Timeout(10)
    void aCompletionBeforeItsInvocationOrATwiceUsedSeqIsAnError() {
        // both events of one operation come from one JVM's monotonic clock: the reverse order means the times are
        // not what the checks take them for (another clock, a hand-edit)
        String invoke = HistoryJson.toLine(new Op(OpType.INVOKE, 1, 0, "acquire", "r", null, null, null, 1L, 50L));
        String ok = HistoryJson.toLine(new Op(OpType.OK, 1, 0, "acquire", "r", 5L, null, null, 2L, 40L));
        assertThatThrownBy(() -> HistoryReader.parse(invoke + "\n" + ok + "\n"))
                .hasMessage("history line 2: process 1 op 0 completed (mono 40) before it was invoked (mono 50)");
        String row = HistoryJson.toLine(new CommitRow(7, "a", 1L, 1, 0));
        String again = HistoryJson.toLine(new CommitRow(7, "a", 2L, 2, 0));
        assertThatThrownBy(() -> HistoryReader.parse(row + "\n" + again + "\n"))
                .hasMessage("history line 2: a second commit row with seq 7 (the first is on line 1)");
    }

    @Test
    @Timeout(10)
    void aFieldGivenTwiceInOneLineIsAnError() {
        // with the last field winning, this ok add would be read as info: its loss no longer reported
        assertThatThrownBy(() -> HistoryJson.fromLine("{\"type\":\"ok\",\"process\":1,\"index\":0,\"f\":\"add\","
                + "\"value\":1,\"wall\":2,\"mono\":2,\"type\":\"info\"}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not JSON")
                .hasMessageContaining("Duplicate Object property \"type\"");
    }

    @Test
    @Timeout(10)
    void anUnknownFieldIsAnError() {
        // a misspelt token would leave this grant out of the issuer check (a duplicate grant unreported)
        assertThatThrownBy(() -> HistoryJson.fromLine("{\"type\":\"ok\",\"process\":1,\"index\":0,"
                + "\"f\":\"acquire\",\"resource\":\"r\",\"tokn\":5,\"wall\":2,\"mono\":2}"))
                .hasMessage("unknown field 'tokn' in a ok event");
        assertThatThrownBy(() -> HistoryJson.fromLine("{\"type\":\"commit\",\"seq\":1,\"resource\":\"a\","
                + "\"token\":1,\"process\":1,\"op\":0,\"index\":0}"))
                .hasMessage("unknown field 'index' in a commit event");
    }

    @Test
    @Timeout(10)
    void aProcessNumberBeyondAnIntIsAnErrorNotAnotherProcess() {
        // 4294967297 cut to an int is 1: two processes' grants of one token would look like one holder's
        assertThatThrownBy(() -> HistoryJson.fromLine("{\"type\":\"ok\",\"process\":4294967297,\"index\":0,"
                + "\"f\":\"acquire\",\"resource\":\"r\",\"token\":5,\"wall\":1,\"mono\":1}"))
                .hasMessageContaining("'process' out of range, was 4294967297");
        assertThatThrownBy(() -> HistoryJson.fromLine("{\"type\":\"commit\",\"seq\":1,\"resource\":\"a\","
                + "\"token\":1,\"process\":-4294967295,\"op\":0}"))
                .hasMessageContaining("'process' out of range");
    }
}

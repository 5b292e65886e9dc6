package dev.fencing.verify.client;

import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.verify.history.HistoryReader;
import dev.fencing.verify.history.HistoryWriter;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.SQLTransientConnectionException;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** How a client records one operation: the events, their outcome, and what it says to the pause nemesis. */
@Timeout(10)
class OperationRecorderTest {

    @TempDir
    Path dir;

    private final ByteArrayOutputStream said = new ByteArrayOutputStream();

    @Test
    void anOperationThatCompletesIsAnOkAcquireAndAnOkWrite() throws Exception {
        List<Op> ops = record(steps -> {
            steps.acquired(new FencingToken("counter:2", 41, "h"));
            steps.read();
            steps.writing();
            return 7L;
        });
        assertThat(ops).extracting(Op::type, Op::index, Op::f, Op::token).containsExactly(
                org.assertj.core.groups.Tuple.tuple(OpType.INVOKE, 10L, "acquire", null),
                org.assertj.core.groups.Tuple.tuple(OpType.OK, 10L, "acquire", 41L),
                org.assertj.core.groups.Tuple.tuple(OpType.INVOKE, 11L, "increment", 41L),
                org.assertj.core.groups.Tuple.tuple(OpType.OK, 11L, "increment", 41L));
        assertThat(ops).allMatch(o -> o.resource().equals("counter-2") && o.process() == 3);
        assertThat(ops.get(3).value()).isEqualTo(7L);
        assertThat(said.toString(StandardCharsets.UTF_8)).isEqualTo("in\nwrite\n");
    }

    @Test
    void aWriteTheStoreRefusedFailsWithItsReason() throws Exception {
        List<Op> ops = record(steps -> {
            steps.acquired(new FencingToken("counter:2", 41, "h"));
            steps.writing();
            throw new StaleTokenException("counter:2", new FencingToken("counter:2", 41, "h"), 44);
        });
        assertThat(ops.get(3).type()).isEqualTo(OpType.FAIL);
        assertThat(ops.get(3).reason()).startsWith("stale: ");
    }

    @Test
    void aWriteLostAfterItsStatementIsUnknownButOneBeforeFailed() throws Exception {
        List<Op> inFlight = record(steps -> {
            steps.acquired(new FencingToken("counter:2", 41, "h"));
            steps.writing();
            steps.written();
            throw new SQLTransientConnectionException("connection reset");
        });
        assertThat(inFlight.get(3).type()).isEqualTo(OpType.INFO);
        // the statement was sent but never returned: the transaction cannot have committed
        List<Op> statementLost = record(steps -> {
            steps.acquired(new FencingToken("counter:2", 41, "h"));
            steps.writing();
            throw new SQLTransientConnectionException("connection reset");
        });
        assertThat(statementLost.get(3).type()).isEqualTo(OpType.FAIL);
        List<Op> beforeWrite = record(steps -> {
            steps.acquired(new FencingToken("counter:2", 41, "h"));
            throw new SQLTransientConnectionException("connection reset");
        });
        assertThat(beforeWrite.get(3).type()).isEqualTo(OpType.FAIL);
    }

    @Test
    void anAcquisitionThatTimedOutFailsTheAcquireAlone() throws Exception {
        List<Op> ops = record(steps -> {
            throw new LockAcquisitionException("counter:2", "timed out after 5000 ms");
        });
        assertThat(ops).extracting(Op::type, Op::f).containsExactly(
                org.assertj.core.groups.Tuple.tuple(OpType.INVOKE, "acquire"),
                org.assertj.core.groups.Tuple.tuple(OpType.FAIL, "acquire"));
        assertThat(ops.get(1).reason()).startsWith("lock timeout: ");
    }

    private List<Op> record(OperationRecorder.Body body) throws Exception {
        Path file = dir.resolve("h" + System.nanoTime() + ".jsonl");
        try (HistoryWriter history = HistoryWriter.open(file)) {
            new OperationRecorder(history, 3, 10, "increment", "counter-2", null,
                    new PrintStream(said, true, StandardCharsets.UTF_8)).run(body);
        }
        return HistoryReader.read(file).ops();
    }
}

package dev.fencing.mode;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;

/** The report of observed calls: per method and outcome, bounded, and its would-be refusals logged rate-limited. */
class ObservedCallsTest {

    private final Logger logger = Logger.getLogger(ObservedCalls.class.getName());
    private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            logged.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void capture() {
        logger.addHandler(capture);
    }

    @AfterEach
    void release() {
        logger.removeHandler(capture);
    }

    @Test
    void countsPerMethodAndOutcomeAndListsTheMethodsWithoutAToken() {
        ObservedCalls calls = new ObservedCalls();
        FencingToken token = new FencingToken("accounts", 6, "h");
        calls.record("Accounts.save()", "accounts", "accepted", false, "accounts", token, null);
        calls.record("Accounts.save()", "accounts", "stale", true, "accounts", token, 9L);
        calls.record("Jobs.run()", "accounts", "missing", true, "accounts", null, null);
        calls.record("Jobs.run()", "accounts", "missing", true, "accounts", null, null);

        assertThat(calls.calls()).extracting(ObservedCalls.ObservedCall::operation)
                .containsExactly("Accounts.save()", "Jobs.run()");
        assertThat(calls.calls().get(0).outcomes()).containsExactly(
                java.util.Map.entry("accepted", 1L), java.util.Map.entry("stale", 1L));
        assertThat(calls.withoutToken()).singleElement().satisfies(call -> {
            assertThat(call.operation()).isEqualTo("Jobs.run()");
            assertThat(call.count("missing")).isEqualTo(2);
            assertThat(call.lastOutcome()).isEqualTo("missing");
        });
    }

    @Test
    void logsAtMostOneLinePerMethodAndOutcomePerIntervalAndNeverAnAcceptedCall() {
        ObservedCalls calls = new ObservedCalls();
        FencingToken token = new FencingToken("accounts", 6, "h");
        calls.record("Accounts.save()", "accounts", "accepted", false, "accounts", token, null);
        for (int i = 0; i < 5; i++) {
            calls.record("Accounts.save()", "accounts", "stale", true, "accounts:42", token, 9L);
        }
        // a flood of stale tokens does not hide that the same method also runs without one
        calls.record("Accounts.save()", "accounts", "missing", true, "accounts:43", null, null);
        calls.record("Accounts.save()", "accounts", "missing", true, "accounts:44", null, null);
        calls.record("Jobs.run()", "accounts", "missing", true, "accounts", null, null);

        assertThat(logged).hasSize(3);
        String first = java.text.MessageFormat.format(logged.get(0).getMessage(), logged.get(0).getParameters());
        assertThat(first).contains("Accounts.save()", "stale", "accounts:42", "token 6", "max_seen 9");
        String second = java.text.MessageFormat.format(logged.get(1).getMessage(), logged.get(1).getParameters());
        assertThat(second).contains("Accounts.save()", "missing", "accounts:43", "token none");
    }

    @Test
    void recordsAtMostMaxMethodsAndCountsTheRestAsDropped() {
        ObservedCalls calls = new ObservedCalls();
        for (int i = 0; i < ObservedCalls.MAX_METHODS + 5; i++) {
            calls.record("M" + i + ".run()", "accounts", "accepted", false, "accounts", null, null);
        }
        assertThat(calls.calls()).hasSize(ObservedCalls.MAX_METHODS);
        assertThat(calls.dropped()).isEqualTo(5);
        calls.clear();
        assertThat(calls.calls()).isEmpty();
        assertThat(calls.dropped()).isZero();
    }
}

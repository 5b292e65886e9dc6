package dev.fencing.reactive;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.LeftScopes;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A task on a Reactor scheduler that binds a token and never closes its scope: without the hook the next task on
 * that worker runs under the token; with it the scope is closed when the task ends, logged at ERROR and counted.
 */
@Timeout(30)
class LeftScopesOnSchedulersTest {

    private static final FencingToken LEAKED = new FencingToken("accounts:1", 7, "leaker");

    /** One worker thread, so the second task runs where the first one left its scope. */
    private final Scheduler single = Schedulers.newSingle("leak-test");
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
    private final Logger logger = Logger.getLogger(LeftScopes.class.getName());
    private final Handler handler = new Handler() {
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
    void listen() {
        logger.addHandler(handler);
    }

    @AfterEach
    void cleanUp() {
        LeftScopesOnSchedulers.uninstall();
        logger.removeHandler(handler);
        single.dispose();
    }

    @Test
    void withoutTheHookTheNextTaskOnTheWorkerRunsUnderTheLeftToken() {
        leakThenLook(); // warms nothing: the hook is not installed
        assertThat(leakThenLook()).contains(LEAKED);
    }

    @Test
    void theHookClosesWhatATaskLeftAndLogsAndCountsIt() {
        new LeftScopesOnSchedulers(new FencingMetrics(registry)).install();
        assertThat(leakThenLook()).isEmpty();
        assertThat(registry.get(FencingMetrics.LEFT_SCOPES).tag("carrier", "reactor").counter().count())
                .isEqualTo(1);
        assertThat(logged).singleElement().satisfies(record -> {
            assertThat(record.getLevel()).isEqualTo(Level.SEVERE);
            assertThat(record.getMessage()).startsWith("A task on a Reactor scheduler left fencing tokens bound on "
                    + "its thread (leak-test").contains(LEAKED.toString()).contains("next task");
        });
    }

    @Test
    void aTaskThatClosesWhatItBindsIsNotReported() {
        new LeftScopesOnSchedulers(new FencingMetrics(registry)).install();
        Mono.fromCallable(() -> {
            try (FencingScope ignored = FencingContext.bind(LEAKED)) {
                return 1;
            }
        }).subscribeOn(single).block(Duration.ofSeconds(10));
        assertThat(registry.get(FencingMetrics.LEFT_SCOPES).counter().count()).isZero();
        assertThat(logged).isEmpty();
    }

    /**
     * Two application contexts in one JVM (a test's cached contexts): the hook is JVM-wide, and closing the later
     * context must not leave the earlier one's workers unprotected.
     */
    @Test
    void closingTheLaterInstanceLeavesTheEarlierOneRunningTheHook() {
        SimpleMeterRegistry earlierRegistry = new SimpleMeterRegistry();
        LeftScopesOnSchedulers earlier = new LeftScopesOnSchedulers(new FencingMetrics(earlierRegistry)).install();
        LeftScopesOnSchedulers later = new LeftScopesOnSchedulers(new FencingMetrics(registry)).install();
        assertThat(leakThenLook()).isEmpty();
        assertThat(leftScopes(registry)).as("the later instance runs the hook").isEqualTo(1);
        assertThat(leftScopes(earlierRegistry)).isZero();

        later.close();
        later.close(); // again: nothing
        assertThat(leakThenLook()).as("the earlier instance still protects the workers").isEmpty();
        assertThat(leftScopes(earlierRegistry)).isEqualTo(1);
        assertThat(leftScopes(registry)).isEqualTo(1);

        earlier.close();
        leakThenLook();
        assertThat(leakThenLook()).as("no instance open: no hook").contains(LEAKED);
    }

    @Test
    void closingAnEarlierInstanceLeavesTheLaterOneRunningTheHook() {
        SimpleMeterRegistry earlierRegistry = new SimpleMeterRegistry();
        LeftScopesOnSchedulers earlier = new LeftScopesOnSchedulers(new FencingMetrics(earlierRegistry)).install();
        LeftScopesOnSchedulers later = new LeftScopesOnSchedulers(new FencingMetrics(registry)).install();
        earlier.close();
        assertThat(leakThenLook()).isEmpty();
        assertThat(leftScopes(registry)).isEqualTo(1);
        assertThat(leftScopes(earlierRegistry)).isZero();
        later.close();
        leakThenLook();
        assertThat(leakThenLook()).contains(LEAKED);
    }

    private static double leftScopes(SimpleMeterRegistry registry) {
        var counter = registry.find(FencingMetrics.LEFT_SCOPES).tag("carrier", "reactor").counter();
        return counter == null ? 0 : counter.count();
    }

    /** One task binds and leaves its scope, the next one on the same worker reports what it finds bound. */
    private Optional<FencingToken> leakThenLook() {
        Mono.fromRunnable(() -> FencingContext.bind(LEAKED)).subscribeOn(single).block(Duration.ofSeconds(10));
        return Mono.fromCallable(() -> Optional.ofNullable(FencingContext.current("accounts:1")))
                .subscribeOn(single).block(Duration.ofSeconds(10));
    }
}

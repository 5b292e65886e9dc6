package dev.fencing.metrics;

import dev.fencing.context.FencingContext;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Item 9: an {@code error} or {@code failed} outcome names the exception behind it, with few, cached counters. */
class FailureCountersTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);

    @Test
    void theTagIsTheSimpleNameOfTheWrappedCauseOrOfTheExceptionItself() {
        FenceStoreException wrapped = new FenceStoreException("r", new FencingToken("r", 1, "h"), "down",
                new SQLTransientConnectionException("no route"));
        assertThat(FailureCounters.exceptionTag(FailureCounters.origin(wrapped).getClass()))
                .isEqualTo("SQLTransientConnectionException");
        assertThat(FailureCounters.origin(new LockAcquisitionException("r", "timed out")))
                .isInstanceOf(LockAcquisitionException.class);
        assertThat(FailureCounters.origin(new LockAcquisitionException("r", "x", new TimeoutException())))
                .isInstanceOf(TimeoutException.class);
        assertThat(FailureCounters.origin(new IllegalStateException("x", new TimeoutException())))
                .as("only a library exception is unwrapped").isInstanceOf(IllegalStateException.class);
        assertThat(FailureCounters.exceptionTag(new RuntimeException() { }.getClass()))
                .isEqualTo("FailureCountersTest$1");
    }

    @Test
    void oneCounterPerClassCreatedOnceAndCappedAtOther() {
        CheckCounters checks = metrics.checks("r");
        Counter first = checks.error().counter(new IllegalStateException("a"));
        assertThat(checks.error().counter(new IllegalStateException("b"))).isSameAs(first);
        assertThat(first.getId().getTag("exception")).isEqualTo("IllegalStateException");
        assertThat(checks.accepted().getId().getTag("exception")).isEqualTo(FencingMetrics.NONE);
        assertThat(metrics.acquisitions("r").acquired().getId().getTag("exception")).isEqualTo(FencingMetrics.NONE);
        List<Throwable> many = List.of(new IllegalArgumentException(), new UnsupportedOperationException(),
                new ArithmeticException(), new NullPointerException(), new ClassCastException(),
                new ArrayStoreException(), new IndexOutOfBoundsException(), new ArrayIndexOutOfBoundsException(),
                new StringIndexOutOfBoundsException(), new NegativeArraySizeException(), new SecurityException(),
                new java.util.ConcurrentModificationException(), new java.util.NoSuchElementException(),
                new java.util.concurrent.CancellationException(), new java.util.concurrent.RejectedExecutionException(),
                new java.util.concurrent.CompletionException("x", null), new NumberFormatException(),
                new IllegalMonitorStateException(), new IllegalThreadStateException(),
                new java.util.EmptyStackException(), new java.util.InputMismatchException(),
                new java.nio.BufferOverflowException(), new java.nio.BufferUnderflowException(),
                new java.nio.ReadOnlyBufferException(), new java.io.IOException(), new java.io.EOFException(),
                new java.io.FileNotFoundException(), new java.sql.SQLException(), new TimeoutException(),
                new InterruptedException(), new CloneNotSupportedException(), new ClassNotFoundException(),
                new NoSuchFieldException(), new NoSuchMethodException(), new InstantiationException());
        assertThat(many.size()).isGreaterThan(FailureCounters.MAX_CLASSES);
        for (Throwable t : many) {
            checks.error().increment(t);
        }
        assertThat(registry.find(FencingMetrics.CHECKS).tag("outcome", "error").counters())
                .hasSize(FailureCounters.MAX_CLASSES + 1)
                .anySatisfy(c -> assertThat(c.getId().getTag("exception")).isEqualTo(FailureCounters.OTHER));
    }

    @Test
    void theGuardTagsAStoreErrorWithItsCauseAndAnIssuerFailureWithItsException() {
        FenceStore failing = new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) {
                throw new FenceStoreException(resource, token, "database unreachable",
                        new SQLTransientConnectionException("refused"));
            }
        };
        FencePoint check = new FencePoint("Repo.write()", "r", null, null, false, metrics);
        FenceGuard guard = new FenceGuard(failing);
        FencingContext.run(new FencingToken("r", 1, "h"), () ->
                assertThatThrownBy(() -> guard.invoke(check, new Object[0], () -> "x"))
                        .isInstanceOf(FenceStoreException.class));
        assertThat(registry.get(FencingMetrics.CHECKS).tag("outcome", "error")
                .tag("exception", "SQLTransientConnectionException").counter().count()).isEqualTo(1);

        TokenIssuer down = (resource, timeout) -> {
            throw new IllegalStateException("lock service down");
        };
        FencePoint acquire = new FencePoint("Service.run()", "s", null, null, true, metrics);
        FenceGuard acquiring = new FenceGuard(new InMemoryFenceStore(), down, Duration.ofSeconds(1));
        assertThatThrownBy(() -> acquiring.invoke(acquire, new Object[0], () -> "x"))
                .isInstanceOf(LockAcquisitionException.class);
        assertThat(registry.get(FencingMetrics.ACQUISITIONS).tag("outcome", "failed")
                .tag("exception", "IllegalStateException").counter().count()).isEqualTo(1);
    }
}

package dev.fencing.guard;

import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.DeferredVerdict;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.fencing.guard.Bound.bound;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A store that judges after {@code fence} returns ({@link FencedCall#deferVerdict()}): the guard counts nothing
 * itself, and the verdict object counts the later outcome once, naming and reporting a rejection as the guard would.
 */
class DeferredVerdictTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencePoint point = new FencePoint("Repo.save(Note)", "r", null, null, false,
            new FencingMetrics(registry));

    /** Runs the write at once and keeps the verdicts for the test to settle, as a commit would. */
    private static final class DeferringStore implements FenceStore {
        final List<DeferredVerdict> verdicts = new ArrayList<>();

        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
            verdicts.add(write.deferVerdict());
            return write.proceed();
        }
    }

    private double count(String outcome) {
        var counter = registry.find("fencing.checks").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void theVerdictIsCountedWhenTheStoreReachesItAndOnce() throws Throwable {
        DeferringStore store = new DeferringStore();
        List<TokenRejectedException> heard = new ArrayList<>();
        FenceGuard guard = FenceGuard.builder(store).rejectionListener(heard::add).build();
        FencingToken t5 = new FencingToken("r", 5, "a");
        assertThat(bound(t5, () -> guard.invoke(point, new Object[0], () -> "ok"))).isEqualTo("ok");
        assertThat(count("accepted")).as("not counted when fence returns").isZero();
        store.verdicts.get(0).accepted();
        store.verdicts.get(0).accepted();
        assertThat(count("accepted")).isEqualTo(1);

        FencingToken t4 = new FencingToken("r", 4, "z");
        bound(t4, () -> guard.invoke(point, new Object[0], () -> "zombie body ran"));
        StaleTokenException stale = (StaleTokenException) TokenRejectedException.of("r", t4, 5, Verdict.REJECT_STALE);
        RuntimeException named = store.verdicts.get(1).failed(stale);
        assertThat(named).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.operation()).isEqualTo("Repo.save(Note)");
            assertThat(e.presented()).isSameAs(t4);
        });
        assertThat(heard).containsExactly((TokenRejectedException) named);
        assertThat(store.verdicts.get(1).failed(stale)).as("a second outcome is not counted").isSameAs(stale);
        assertThat(count("stale")).isEqualTo(1);
        assertThat(count("accepted")).isEqualTo(1);
        assertThat(count("error")).isZero();
    }

    @Test
    void aBodyFailureAfterDeferringCountsNothingAndPassesThrough() {
        DeferringStore store = new DeferringStore();
        FenceGuard guard = FenceGuard.builder(store).build();
        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> bound(new FencingToken("r", 5, "a"), () -> guard.invoke(point, new Object[0], () -> {
            throw boom;
        }))).isSameAs(boom);
        assertThat(count("accepted") + count("error")).isZero();
    }

    @Test
    void aCallThatDoesNotTrackChecksHandsOutTheUncountedVerdict() {
        FencedCall<String> plain = () -> "x";
        StaleTokenException stale = (StaleTokenException) TokenRejectedException.of("r",
                new FencingToken("r", 1, "a"), 2, Verdict.REJECT_STALE);
        assertThat(plain.deferVerdict()).isSameAs(DeferredVerdict.NONE);
        assertThat(DeferredVerdict.NONE.failed(stale)).isSameAs(stale);
    }

    @Test
    void aStoreThatKeptTheCallCannotDeferAfterTheCheckReturned() throws Throwable {
        List<FencedCall<?>> kept = new ArrayList<>();
        FenceStore keeping = new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
                kept.add(write);
                return write.proceed();
            }
        };
        FenceGuard guard = FenceGuard.builder(keeping).build();
        bound(new FencingToken("r", 5, "a"), () -> guard.invoke(point, new Object[0], () -> "ok"));
        assertThat(count("accepted")).isEqualTo(1);
        assertThatThrownBy(() -> kept.get(0).deferVerdict()).isInstanceOf(IllegalStateException.class);
    }
}

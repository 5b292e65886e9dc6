package dev.fencing.guard;

import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.rule.DuplicateTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static dev.fencing.guard.Bound.bound;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The guard tells its {@link RejectionListener} of each rejection, named at the operation, and of nothing else. */
class RejectionListenerTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencePoint repo = new FencePoint("Repo.write(String)", "r", null, null, false,
            new FencingMetrics(registry));

    @Test
    void onlyRejectionsReachTheListenerNamedAtTheOperationAndCounted() throws Throwable {
        List<TokenRejectedException> heard = new ArrayList<>();
        FenceGuard guard = new FenceGuard(new InMemoryFenceStore(), null, Duration.ofSeconds(1), heard::add);

        bound(new FencingToken("r", 5, "a"), () -> guard.invoke(repo, new Object[0], () -> "ok"));
        assertThat(heard).isEmpty();
        assertThatThrownBy(() -> bound(new FencingToken("r", 3, "z"), () -> guard.invoke(repo, new Object[0],
                () -> "stale"))).isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> bound(new FencingToken("r", 5, "b"), () -> guard.invoke(repo, new Object[0],
                () -> "duplicate"))).isInstanceOf(DuplicateTokenException.class);
        assertThatThrownBy(() -> guard.invoke(repo, new Object[0], () -> "missing"))
                .isInstanceOf(MissingTokenException.class);

        assertThat(heard).hasSize(2);
        TokenRejectedException stale = heard.get(0);
        assertThat(stale.resource()).isEqualTo("r");
        assertThat(stale.presented()).isEqualTo(new FencingToken("r", 3, "z"));
        assertThat(stale.maxSeen()).isEqualTo(5);
        assertThat(stale.verdict()).isEqualTo(Verdict.REJECT_STALE);
        assertThat(stale.operation()).isEqualTo("Repo.write(String)");
        assertThat(heard.get(1).verdict()).isEqualTo(Verdict.REJECT_DUPLICATE);
        assertThat(registry.find("fencing.checks").tag("outcome", "stale").counter().count()).isEqualTo(1);
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void allTellsEachListenerInOrderAndOneThatThrowsDoesNotStopTheNext() {
        List<String> heard = new ArrayList<>();
        RejectionListener first = rejection -> heard.add("first " + rejection.presented().value());
        RejectionListener broken = rejection -> {
            throw new IllegalStateException("listener broke");
        };
        RejectionListener last = rejection -> heard.add("last " + rejection.presented().value());
        TokenRejectedException stale = TokenRejectedException.of("r", new FencingToken("r", 3, "z"), 5,
                Verdict.REJECT_STALE);

        RejectionListener.all(List.of(first, broken, last)).rejected(stale);
        assertThat(heard).containsExactly("first 3", "last 3");
        assertThat(RejectionListener.all(List.of())).isSameAs(RejectionListener.NONE);
        assertThat(RejectionListener.all(List.of(last))).isSameAs(last);
    }

    @Test
    void aFailingListenerDoesNotChangeWhatTheCallerGets() {
        FenceGuard guard = new FenceGuard(new InMemoryFenceStore(), null, Duration.ofSeconds(1), rejection -> {
            throw new IllegalStateException("listener broke");
        });
        assertThatThrownBy(() -> {
            bound(new FencingToken("r", 5, "a"), () -> guard.invoke(repo, new Object[0], () -> "ok"));
            bound(new FencingToken("r", 4, "z"), () -> guard.invoke(repo, new Object[0], () -> "stale"));
        }).isInstanceOf(StaleTokenException.class).hasMessageContaining("Repo.write(String)");
    }
}

package dev.fencing.context;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FencingContextTest {

    private final FencingToken a1 = new FencingToken("a", 1, "h1");
    private final FencingToken a2 = new FencingToken("a", 2, "h2");
    private final FencingToken b1 = new FencingToken("b", 1, "h3");

    @AfterEach
    void nothingLeaks() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    /** A bound token is found by its resource's text, whatever the instance; no resource finds nothing. */
    @Test
    void aTokenIsFoundByEqualTextAndNoResourceFindsNothing() {
        try (FencingScope ignored = FencingContext.bind(new FencingToken("orders", 1, "h"),
                new FencingToken("ledger", 2, "h"))) {
            String copy = new String("ledger".toCharArray()); // another instance, the same text
            assertThat(FencingContext.current(copy)).extracting(FencingToken::value).isEqualTo(2L);
            assertThat(FencingContext.current("ledgers")).isNull();
            assertThat(FencingContext.current(null)).isNull();
            assertThat(FencingContext.present(null)).isNull();
        }
    }

    @Test
    void bindsForTheScopeOnly() {
        assertThat(FencingContext.current("a")).isNull();
        try (FencingScope ignored = FencingContext.bind(a1)) {
            assertThat(FencingContext.current("a")).isSameAs(a1);
            assertThat(FencingContext.current("b")).isNull();
        }
        assertThat(FencingContext.current("a")).isNull();
    }

    @Test
    void innerBindForTheSameResourceRestoresTheOuterOnClose() {
        try (FencingScope outer = FencingContext.bind(a1)) {
            try (FencingScope inner = FencingContext.bind(a2)) {
                assertThat(FencingContext.current("a")).isSameAs(a2);
            }
            assertThat(FencingContext.current("a")).isSameAs(a1);
        }
    }

    @Test
    void severalResourcesInOneScope() {
        try (FencingScope ignored = FencingContext.bind(a1, b1)) {
            assertThat(FencingContext.snapshot()).containsOnlyKeys("a", "b");
            assertThat(FencingContext.current("b")).isSameAs(b1);
        }
        assertThatThrownBy(() -> FencingContext.bind(a1, a2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'a'");
        assertThat(FencingContext.isEmpty()).isTrue();
        assertThat(FencingContext.snapshot()).isEmpty();
    }

    @Test
    void snapshotShowsTheInnermostBinding() {
        try (FencingScope outer = FencingContext.bind(List.of(a1, b1))) {
            try (FencingScope inner = FencingContext.bind(a2)) {
                assertThat(FencingContext.snapshot()).containsEntry("a", a2).containsEntry("b", b1);
            }
        }
    }

    @Test
    void exceptionsInsideRunAndCallUnbind() {
        assertThatThrownBy(() -> FencingContext.run(a1, () -> {
            throw new IllegalStateException("boom");
        })).hasMessage("boom");
        assertThatThrownBy(() -> FencingContext.call(a1, () -> {
            throw new java.io.IOException("io");
        })).hasMessage("io");
        assertThat(FencingContext.current("a")).isNull();
    }

    @Test
    void callReturnsTheValue() throws Exception {
        assertThat(FencingContext.call(a1, () -> FencingContext.current("a"))).isSameAs(a1);
    }

    @Test
    void closingOutOfOrderClosesTheInnerScopesTooAndSaysSo() {
        FencingScope outer = FencingContext.bind(a1);
        FencingScope inner = FencingContext.bind(b1);
        assertThatThrownBy(outer::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("innermost first");
        assertThat(FencingContext.isEmpty()).isTrue();
        inner.close(); // already closed with the outer one: no effect
        outer.close();
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void closingTwiceIsHarmless() {
        FencingScope outer = FencingContext.bind(a1);
        FencingScope inner = FencingContext.bind(a2);
        inner.close();
        inner.close();
        assertThat(FencingContext.current("a")).isSameAs(a1);
        outer.close();
    }

    @Test
    void tokensDoNotCrossThreadsAndCannotBeClosedFromAnother() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (FencingScope scope = FencingContext.bind(a1)) {
            assertThat(pool.submit(() -> FencingContext.current("a")).get()).isNull();
            CompletableFuture<Throwable> closing = CompletableFuture.supplyAsync(() -> {
                try {
                    scope.close();
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            }, pool);
            assertThat(closing.get()).isInstanceOf(IllegalStateException.class);
            assertThat(FencingContext.current("a")).isSameAs(a1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void nullTokensAreRefused() {
        assertThatThrownBy(() -> FencingContext.bind((FencingToken) null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> FencingContext.bind(a1, null)).hasMessageContaining("tokens[1]");
    }
}

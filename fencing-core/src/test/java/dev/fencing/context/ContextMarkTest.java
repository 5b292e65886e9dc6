package dev.fencing.context;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A mark hands a thread back as it was found: what was opened since and left open is closed and named, what was
 * bound before stays bound, and taking a mark binds nothing.
 */
class ContextMarkTest {

    private final FencingToken outer = new FencingToken("accounts:1", 5, "outer");
    private final FencingToken leaked = new FencingToken("accounts:2", 7, "leaky");
    private final FencingToken inner = new FencingToken("ledger", 9, "leaky");

    @AfterEach
    void nothingLeftBound() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void aMarkBindsNothingAndNothingOpenedSinceIsNothingClosed() {
        FencingContext.Mark mark = FencingContext.mark();
        assertThat(FencingContext.isEmpty()).isTrue();
        try (FencingScope closed = FencingContext.bind(leaked)) {
            assertThat(FencingContext.current("accounts:2")).isEqualTo(leaked);
        }
        assertThat(FencingContext.closeSince(mark)).isEmpty();
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void scopesLeftOpenSinceTheMarkAreClosedAndNamedInnermostFirst() {
        FencingContext.Mark mark = FencingContext.mark();
        FencingContext.bind(leaked);
        FencingContext.bindOnly(List.of(inner)); // isolating: hides the one below
        assertThat(FencingContext.closeSince(mark)).containsExactly(inner, leaked);
        assertThat(FencingContext.isEmpty()).isTrue();
        assertThat(FencingContext.current("accounts:2")).isNull();
    }

    @Test
    void whatWasBoundBeforeTheMarkStaysBound() {
        try (FencingScope before = FencingContext.bind(outer)) {
            FencingContext.Mark mark = FencingContext.mark();
            FencingContext.bind(leaked);
            assertThat(FencingContext.closeSince(mark)).containsExactly(leaked);
            assertThat(FencingContext.current("accounts:1")).isEqualTo(outer);
            assertThat(FencingContext.current("accounts:2")).isNull();
            assertThat(FencingContext.closeSince(mark)).isEmpty(); // as found: nothing more to close
        }
    }

    @Test
    void aMarkedScopeClosedMeanwhileClosesNothing() {
        FencingScope before = FencingContext.bind(outer);
        FencingContext.Mark mark = FencingContext.mark();
        before.close(); // the thread unwound below the mark
        assertThat(FencingContext.closeSince(mark)).isEmpty();
    }

    @Test
    void closeAllClosesEveryScopeAndNamesTheirTokens() {
        FencingContext.bind(outer);
        FencingContext.bind(leaked);
        assertThat(FencingContext.closeAll()).containsExactly(leaked, outer);
        assertThat(FencingContext.closeAll()).isEmpty();
    }

    /** An outer scope closed over inner ones left open names what they bound (a test's own close, say). */
    @Test
    void anOuterScopeClosedOverOpenInnerOnesNamesTheirTokens() {
        FencingScope outerScope = FencingContext.bind(outer);
        FencingContext.bind(leaked);
        assertThatThrownBy(outerScope::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("1 inner fencing scope(s) were still open")
                .hasMessageContaining("accounts:2#7@leaky");
    }

    @Test
    void aMarkIsUsedOnTheThreadThatTookIt() {
        FencingContext.Mark mark = FencingContext.mark();
        assertThatThrownBy(() -> CompletableFuture.runAsync(() -> FencingContext.closeSince(mark)).join())
                .hasCauseInstanceOf(IllegalStateException.class)
                .hasMessageContaining("must be used on the thread that took it");
    }
}

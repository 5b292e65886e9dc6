package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.SubmissionPublisher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Item 3: a method whose write happens after it returns cannot be fenced, and says why. */
class AsyncReturnTypesTest {

    @Test
    void futuresStagesAndPublishersAreDeferred() {
        assertThat(AsyncReturnTypes.deferredType(CompletableFuture.class)).isNotNull();
        assertThat(AsyncReturnTypes.deferredType(CompletionStage.class)).isEqualTo(CompletionStage.class.getName());
        assertThat(AsyncReturnTypes.deferredType(Future.class)).isEqualTo(Future.class.getName());
        assertThat(AsyncReturnTypes.deferredType(FutureTask.class)).isEqualTo(Future.class.getName());
        assertThat(AsyncReturnTypes.deferredType(Mono.class)).isEqualTo("org.reactivestreams.Publisher");
        assertThat(AsyncReturnTypes.deferredType(Flux.class)).isEqualTo("org.reactivestreams.Publisher");
        assertThat(AsyncReturnTypes.deferredType(SubmissionPublisher.class))
                .isEqualTo("java.util.concurrent.Flow.Publisher");
    }

    @Test
    void ordinaryResultsAreNot() {
        for (Class<?> type : List.of(void.class, long.class, String.class, Object.class, List.class, Runnable.class)) {
            assertThat(AsyncReturnTypes.deferredType(type)).as(type.getName()).isNull();
            assertThatCode(() -> AsyncReturnTypes.check(type, "Repo.save()")).doesNotThrowAnyException();
        }
    }

    @Test
    void aDeferredResultIsAConfigurationErrorThatSaysWhy() {
        assertThatThrownBy(() -> AsyncReturnTypes.check(Mono.class, "Repo.save(Account)"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Repo.save(Account)").hasMessageContaining(Mono.class.getName())
                .hasMessageContaining("after the method returns").hasMessageContaining("return a Mono or Flux");
    }

    /**
     * A lazy result (a Stream, an Iterator) is consumed after the method returned: warned at startup, not refused (a
     * fenced query may stream its rows inside the caller's transaction); a list is not (a new user's trial wrote
     * in a Stream's map step after the fence).
     */
    @Test
    void aLazyResultIsWarnedAndAListIsNot() {
        try (dev.fencing.LogCapture logs = dev.fencing.LogCapture.of(AsyncReturnTypes.class)) {
            AsyncReturnTypes.warnIfLazy(java.util.stream.Stream.class, "Repo.writeLazily(long)");
            AsyncReturnTypes.warnIfLazy(java.util.stream.IntStream.class, "Repo.ids()");
            AsyncReturnTypes.warnIfLazy(java.util.ListIterator.class, "Repo.rows()");
            AsyncReturnTypes.warnIfLazy(List.class, "Repo.all()");
            AsyncReturnTypes.warnIfLazy(void.class, "Repo.save()");
            assertThat(logs.records()).extracting(java.util.logging.LogRecord::getMessage).satisfiesExactly(
                    m -> assertThat(m).startsWith("@Fenced on Repo.writeLazily(long) returns java.util.stream.Stream")
                            .contains("after the check").contains("Return a List"),
                    m -> assertThat(m).startsWith("@Fenced on Repo.ids() returns java.util.stream.IntStream"),
                    m -> assertThat(m).startsWith("@Fenced on Repo.rows() returns java.util.ListIterator"));
            assertThatCode(() -> AsyncReturnTypes.check(java.util.stream.Stream.class, "Repo.writeLazily(long)"))
                    .doesNotThrowAnyException();
        }
    }
}

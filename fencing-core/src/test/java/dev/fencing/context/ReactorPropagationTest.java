package dev.fencing.context;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** With Reactor's automatic context propagation on, a pipeline hopping threads sees the subscriber's token. */
class ReactorPropagationTest {

    @BeforeEach
    void on() {
        Hooks.enableAutomaticContextPropagation();
    }

    @AfterEach
    void off() {
        Hooks.disableAutomaticContextPropagation();
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void theTokenFollowsThePipelineAcrossSchedulers() {
        FencingToken token = new FencingToken("accounts", 34, "lease-b");
        String seen;
        try (FencingScope ignored = FencingContext.bind(token)) {
            seen = Mono.just("x")
                    .publishOn(Schedulers.boundedElastic())
                    .map(x -> Thread.currentThread().getName() + "|" + FencingContext.current("accounts"))
                    .contextCapture()
                    .block(Duration.ofSeconds(10));
        }
        assertThat(seen).doesNotStartWith(Thread.currentThread().getName() + "|")
                .endsWith("|" + token.toText());
    }

    @Test
    void withoutABoundTokenThePipelineSeesNone() {
        String seen = Mono.just("x")
                .publishOn(Schedulers.boundedElastic())
                .map(x -> String.valueOf(FencingContext.current("accounts")))
                .contextCapture()
                .block(Duration.ofSeconds(10));
        assertThat(seen).isEqualTo("null");
    }
}

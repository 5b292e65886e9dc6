package dev.fencing.boot.autoconfigure;

import dev.fencing.context.FencingContext;
import dev.fencing.context.TokenUse;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * In observe mode every would-be refusal runs (docs/propagation.md, metrics.md), a check presenting a token whose lock
 * is known lost too: a carrier must send such a token. A version of the carriers that refused it before sending
 * (c9fa031, reverted) failed an application's outgoing requests while it rolled fencing out in observe mode.
 */
@Timeout(60)
class ObserveModeCarrierTest {

    @Test
    void inObserveModeALockKnownLostStillSendsTheRequest() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                        FencingPropagateToAutoConfiguration.class, FencingRestClientAutoConfiguration.class))
                .withPropertyValues("fencing.store.type=in-memory", "fencing.mode=observe",
                        "fencing.web.client.propagate-to=127.0.0.1")
                .withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    RestClient.Builder builder = RestClient.builder();
                    context.getBean("fencingRestClientCustomizer", RestClientCustomizer.class).customize(builder);
                    RestClient client = builder.build();
                    FencingToken token = new FencingToken("ledger", 8, "paused");
                    TokenUse use = TokenUse.open(token, () -> true); // the lease ended while held
                    try (var ignored = FencingContext.bindAcquired(token, use)) {
                        Throwable failure = catchThrowable(() -> client.post().uri("http://127.0.0.1:1/entries")
                                .retrieve().toBodilessEntity());
                        // observe mode: the request is sent (here: connection refused), not refused before it goes out
                        assertThat(failure).isNotInstanceOf(StaleTokenException.class);
                    } finally {
                        use.close();
                    }
                });
    }
}

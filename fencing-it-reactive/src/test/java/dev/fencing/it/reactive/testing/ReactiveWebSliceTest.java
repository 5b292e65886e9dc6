package dev.fencing.it.reactive.testing;

import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingExceptionAdvice;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;

import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.when;

/**
 * {@code @WebFluxTest} of the controller with the fenced service mocked: the slice starts (a mock writes nothing to
 * fence) and answers the library's exceptions as the application does (409, problem details).
 */
@WebFluxTest(controllers = PingController.class, properties = "fencing.web.reactive.path-patterns=/internal/**")
class ReactiveWebSliceTest {

    @Autowired
    ApplicationContext context;

    @MockitoBean
    PingService pings;

    @Test
    void aStaleTokenIs409AsInTheApplication() {
        when(pings.ping(anyLong(), anyLong())).thenReturn(Mono.error(
                new StaleTokenException("pings:3", new FencingToken("pings:3", 4, "caller"), 5)));
        WebTestClient.bindToApplicationContext(context).build().post().uri("/internal/pings/3/10").exchange()
                .expectStatus().isEqualTo(409)
                .expectBody().jsonPath("$.type").isEqualTo(FencingExceptionAdvice.STALE_TOKEN_TYPE.toString());
    }
}

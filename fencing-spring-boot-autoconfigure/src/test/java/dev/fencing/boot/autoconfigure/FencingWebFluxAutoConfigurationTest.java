package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.FencingConfigurationException;
import dev.fencing.reactive.ReactiveFencing;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingExceptionAdvice;
import dev.fencing.web.FencingHeader;
import dev.fencing.web.FencingTokenFilter;
import dev.fencing.web.reactive.FencingTokenWebFilter;
import dev.fencing.web.reactive.FencingWebExceptionHandler;
import dev.fencing.web.reactive.LeftBindingsWebFilter;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.config.EnableWebFlux;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * {@code FencingWebFluxAutoConfiguration} in reactive web contexts: the problem-detail handler always (unless the
 * application has one), the {@code Fencing-Token} WebFilter only on the paths
 * {@code fencing.web.reactive.path-patterns} names, verifying signatures when the context has a verifier, and a
 * startup failure for patterns matching every path (or set without fencing-reactor). Requests go through the
 * context's own WebFlux handler chain ({@code WebTestClient.bindToApplicationContext}).
 */
@ExtendWith(OutputCaptureExtension.class)
class FencingWebFluxAutoConfigurationTest {

    private static final FencingToken TOKEN = new FencingToken("ledger", 7, "a");
    private static final String SECRET = FencingSigningAutoConfigurationTest.SECRET;

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingWebFluxAutoConfiguration.class))
            .withPropertyValues("fencing.store.type=in-memory");

    /** The servlet filter's property in a WebFlux application was ignored: the header was refused at request time. */
    @Test
    void theServletFiltersPatternsInAWebFluxApplicationFailStartup() {
        runner.withPropertyValues("fencing.web.filter.url-patterns=/internal/*").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining("fencing.web.filter.url-patterns is set, "
                    + "but this is a WebFlux application").hasMessageContaining("fencing.web.reactive.path-patterns");
        });
    }

    /** WebFlux with two routes answering the tokens of their Reactor Context, and one refusing as stale. */
    @Configuration(proxyBeanMethods = false)
    @EnableWebFlux
    static class Routes {
        @Bean
        RouterFunction<ServerResponse> routes() {
            return RouterFunctions.route()
                    .POST("/internal/ledger", request -> tokensSeen())
                    .POST("/public/ledger", request -> tokensSeen())
                    .POST("/internal/stale", request -> Mono.error(
                            new StaleTokenException("ledger", TOKEN, 9, "Ledger.post()")))
                    .build();
        }

        private static Mono<ServerResponse> tokensSeen() {
            return Mono.deferContextual(context -> ServerResponse.ok().bodyValue(
                    ReactiveFencing.tokens(context).values().stream().map(FencingToken::toText)
                            .collect(Collectors.joining(",", "[", "]"))));
        }
    }

    private static WebTestClient client(ApplicationContext context) {
        return WebTestClient.bindToApplicationContext(context).build();
    }

    private static WebTestClient.ResponseSpec post(WebTestClient client, String path, String header) {
        WebTestClient.RequestBodySpec request = client.post().uri(path);
        if (header != null) {
            request.header(FencingHeader.NAME, header);
        }
        return request.exchange();
    }

    /** Every WebFlux application closes, when a request starts on an event loop, what earlier work left bound there. */
    @Test
    void everyWebFluxApplicationGetsTheLeftBindingsFilterWithItsRegistry() {
        runner.withUserConfiguration(Routes.class)
                .withBean(io.micrometer.core.instrument.simple.SimpleMeterRegistry.class).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(LeftBindingsWebFilter.class);
                    // registered with the application's registry: the counter exists before any leak
                    assertThat(context.getBean(io.micrometer.core.instrument.MeterRegistry.class)
                            .find("fencing.scopes.left").tag("carrier", "http").counter()).isNotNull();
                });
    }

    @Test
    void theProblemHandlerIsAlwaysThereAndTheFilterOnlyWithPathPatterns() {
        runner.withUserConfiguration(Routes.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(FencingWebExceptionHandler.class)
                    .hasSingleBean(FencingTokenWebFilter.class);
            WebTestClient client = client(context);
            // no patterns: a caller's header is accepted nowhere, and refused rather than set aside unseen (an
            // acquiring method would take its own lock and write), as outside the patterns when they are set
            post(client, "/internal/ledger", FencingHeader.format(List.of(TOKEN))).expectStatus().isForbidden()
                    .expectBody().jsonPath("$.type").isEqualTo(FencingTokenFilter.UNTRUSTED_TOKEN_TYPE);
            post(client, "/internal/ledger", null).expectStatus().isOk().expectBody(String.class).isEqualTo("[]");
            // the library's refusal, as the servlet advice answers it
            post(client, "/internal/stale", null).expectStatus().isEqualTo(409)
                    .expectBody().jsonPath("$.type").isEqualTo(FencingExceptionAdvice.STALE_TOKEN_TYPE.toString())
                    .jsonPath("$.maxSeen").isEqualTo(9);
        });
    }

    @Test
    void pathPatternsBindCallersTokensThereAndRefuseThemElsewhere() {
        runner.withUserConfiguration(Routes.class).withPropertyValues("fencing.web.reactive.path-patterns=/internal/**")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(FencingTokenWebFilter.class);
                    WebTestClient client = client(context);
                    String header = FencingHeader.format(List.of(TOKEN));
                    post(client, "/internal/ledger", header).expectStatus().isOk()
                            .expectBody(String.class).isEqualTo("[" + TOKEN.toText() + "]");
                    post(client, "/public/ledger", header).expectStatus().isForbidden()
                            .expectBody().jsonPath("$.type").isEqualTo(FencingTokenFilter.UNTRUSTED_TOKEN_TYPE);
                    post(client, "/public/ledger", null).expectStatus().isOk()
                            .expectBody(String.class).isEqualTo("[]");
                });
    }

    @Test
    void withAVerifierTheFilterRefusesUnsignedTokens() {
        runner.withConfiguration(AutoConfigurations.of(FencingSigningAutoConfiguration.class))
                .withUserConfiguration(Routes.class)
                .withPropertyValues("fencing.web.reactive.path-patterns=/internal/**",
                        "fencing.signing.scheme=hmac-sha256", "fencing.signing.current-key-id=k1",
                        "fencing.signing.keys.k1.secret=" + SECRET)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    post(client(context), "/internal/ledger", FencingHeader.format(List.of(TOKEN)))
                            .expectStatus().isForbidden()
                            .expectBody().jsonPath("$.type")
                            .isEqualTo(FencingExceptionAdvice.FORGED_TOKEN_TYPE.toString());
                });
    }

    @Test
    void patternsMatchingEveryPathFailStartupNamingThePropertyAndTheValue() {
        for (String everything : List.of("/**", "/{*path}")) {
            runner.withPropertyValues("fencing.web.reactive.path-patterns=/internal/**," + everything).run(context -> {
                assertThat(context).hasFailed();
                Throwable failure = context.getStartupFailure();
                while (!(failure instanceof FencingConfigurationException) && failure.getCause() != null) {
                    failure = failure.getCause();
                }
                assertThat(failure).isInstanceOf(FencingConfigurationException.class)
                        .hasMessageContaining("fencing.web.reactive.path-patterns")
                        .hasMessageContaining(everything);
                // the advice once, not once from the filter and again from the auto-configuration
                assertThat(failure.getMessage().split("internal paths", -1)).hasSize(2);
            });
        }
    }

    @Test
    void aServletStylePatternEndingInSlashStarIsWarnedAboutAtStartup(CapturedOutput output) {
        runner.withPropertyValues("fencing.web.reactive.path-patterns=/internal/*,/admin/**").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(output).contains("fencing.web.reactive.path-patterns entry '/internal/*' matches one path "
                    + "segment only").contains("'/internal/**' matches everything below /internal")
                    .doesNotContain("entry '/admin/**'");
            // accepted unsigned: a warning, as on the servlet stack (it said nothing here)
            assertThat(output).contains("Fencing-Token headers are accepted on /internal/*, /admin/** "
                    + "(fencing.web.reactive.path-patterns) unsigned");
        });
    }

    @Test
    void withoutFencingReactorTheHandlerStaysAndPathPatternsFailStartupNamingIt() {
        ReactiveWebApplicationContextRunner withoutReactor = runner.withUserConfiguration(Routes.class)
                .withClassLoader(new FilteredClassLoader(ReactiveFencing.class));
        withoutReactor.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(FencingWebExceptionHandler.class)
                    .doesNotHaveBean(FencingTokenWebFilter.class);
            post(client(context), "/internal/stale", null).expectStatus().isEqualTo(409);
            // no token filter can be made, but the header is refused all the same (it was ignored: 200), as the
            // refusing filter and Spring MVC's interceptor refuse it
            String refused = post(client(context), "/internal/ledger", TOKEN.toText()).expectStatus().isEqualTo(403)
                    .expectHeader().contentType("application/problem+json")
                    .expectBody(String.class).returnResult().getResponseBody();
            assertThat(refused).contains(FencingTokenFilter.UNTRUSTED_TOKEN_TYPE, "on no path", "fencing-reactor");
            post(client(context), "/internal/ledger", null).expectStatus().isOk();
        });
        withoutReactor.withPropertyValues("fencing.web.reactive.path-patterns=/internal/**").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("fencing.web.reactive.path-patterns")
                    .hasMessageContaining("dev.fencing:fencing-reactor");
        });
    }

    @Test
    void theApplicationsHandlerWins() {
        runner.withBean("myHandler", FencingWebExceptionHandler.class, FencingWebExceptionHandler::new)
                .run(context -> assertThat(context.getBeansOfType(FencingWebExceptionHandler.class))
                        .containsOnlyKeys("myHandler"));
    }

    @Test
    void nothingOutsideReactiveWebApplicationsOrWithFencingOff() {
        new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                        FencingWebFluxAutoConfiguration.class))
                .withPropertyValues("fencing.store.type=in-memory", "fencing.web.reactive.path-patterns=/internal/**")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FencingWebExceptionHandler.class)
                        .doesNotHaveBean(FencingTokenWebFilter.class));
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(FencingWebFluxAutoConfiguration.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FencingWebExceptionHandler.class));
        runner.withPropertyValues("fencing.enabled=false", "fencing.web.reactive.path-patterns=/internal/**")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FencingWebExceptionHandler.class)
                        .doesNotHaveBean(FencingTokenWebFilter.class));
    }
}

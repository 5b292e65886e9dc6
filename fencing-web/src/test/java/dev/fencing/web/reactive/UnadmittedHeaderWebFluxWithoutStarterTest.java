package dev.fencing.web.reactive;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.spring.EnableFencing;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.config.EnableWebFlux;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A WebFlux application with {@code @EnableFencing} and fencing-web, no Spring Boot, without a
 * {@link FencingTokenWebFilter}: a caller's {@code Fencing-Token} header (a zombie's) is neither admitted nor
 * refused, and the reactive {@code @Fenced(acquire = true)} method takes a lock of its own and writes the zombie's
 * request. The starter installs a filter that refuses the header on every path when none is configured. Closed either
 * way: startup fails naming the filter, or the header is refused before the write.
 */
@Timeout(60)
class UnadmittedHeaderWebFluxWithoutStarterTest {

    public static class Ledger {
        final List<String> entries = new CopyOnWriteArrayList<>();

        @Fenced(resource = "ledger", acquire = true)
        public Mono<String> append(String entry) {
            return Mono.fromSupplier(() -> {
                entries.add(entry);
                return "written";
            });
        }

        /** A method, since the bean is a class-based proxy whose own fields are empty. */
        public List<String> entries() {
            return entries;
        }
    }

    @RestController
    public static class LedgerController {
        private final Ledger ledger;

        public LedgerController(Ledger ledger) {
            this.ledger = ledger;
        }

        @PostMapping("/ledger")
        public Mono<String> append(@RequestBody String entry) {
            return ledger.append(entry);
        }
    }

    @Configuration
    @EnableWebFlux
    @EnableFencing(proxyTargetClass = true)
    static class Application {
        @Bean
        InMemoryReactiveFenceStore reactiveFenceStore() {
            return new InMemoryReactiveFenceStore();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }

        @Bean
        LedgerController ledgerController(Ledger ledger) {
            return new LedgerController(ledger);
        }
    }

    /** The control: the filter the starter installs when no path accepts the header. */
    @Configuration
    static class WithRefusingFilter extends Application {
        @Bean
        FencingTokenWebFilter fencingTokenWebFilter() {
            return new FencingTokenWebFilter(exchange -> false);
        }
    }

    @Test
    void aZombiesHeaderNoFilterAdmittedNeverReachesTheAcquiringWrite() {
        zombieRequestTo(Application.class);
    }

    @Test
    void withTheRefusingFilterTheHeaderIsRefused() {
        zombieRequestTo(WithRefusingFilter.class);
    }

    private static void zombieRequestTo(Class<?> application) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.register(application);
        Throwable startup = catchThrowable(context::refresh);
        try {
            if (startup != null) {
                assertThat(startup).isInstanceOf(FencingConfigurationException.class)
                        .hasMessageContaining("FencingTokenWebFilter");
                return;
            }
            WebTestClient client = WebTestClient.bindToApplicationContext(context).build();
            FencingToken zombie = new FencingToken("ledger", 1, "paused-caller");
            int status = client.post().uri("/ledger").header(FencingHeader.NAME, zombie.toText())
                    .bodyValue("zombie's entry").exchange().returnResult(String.class).getStatus().value();
            assertThat(context.getBean(Ledger.class).entries()).as("the ledger after the zombie's request")
                    .doesNotContain("zombie's entry");
            assertThat(status).isEqualTo(403);
        } finally {
            context.close();
        }
    }
}

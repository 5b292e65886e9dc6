package dev.fencing.web;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.mock.web.MockServletContext;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * A Spring MVC application with {@code @EnableFencing} and fencing-web, no Spring Boot, that did not register
 * {@link UnadmittedTokenInterceptor}: a caller's {@code Fencing-Token} header (a zombie's, paused past its lease) is
 * neither admitted nor refused, and the {@code @Fenced(acquire = true)} method takes a lock of its own and writes the
 * zombie's request. With the starter the interceptor is registered in every servlet application; with or without it, a
 * handler mapping that does not run it fails startup (fencing-web's {@code UnadmittedHeaderCheck}). Closed either way:
 * startup fails naming the interceptor, or the header is refused before the write.
 */
@Timeout(60)
class UnadmittedHeaderWithoutStarterTest {

    /** The service's data, written under the lock the controller's acquiring method takes. */
    public static class Ledger {
        final List<String> entries = new CopyOnWriteArrayList<>();

        @Fenced(resource = "ledger", acquire = true)
        public void append(String entry) {
            entries.add(entry);
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
        public String append(@RequestBody String entry) {
            ledger.append(entry);
            return "written";
        }
    }

    /** The application as the docs' plain Spring setup has it, minus the interceptor. */
    @Configuration
    @EnableWebMvc
    @EnableFencing(proxyTargetClass = true)
    static class Application {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
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

    /** The same application with the interceptor the docs tell plain Spring applications to add. */
    @Configuration
    static class WithInterceptor extends Application implements WebMvcConfigurer {
        @Override
        public void addInterceptors(InterceptorRegistry registry) {
            registry.addInterceptor(new UnadmittedTokenInterceptor("this application accepts it on no path"));
        }
    }

    @Test
    void aZombiesHeaderNoFilterAdmittedNeverReachesTheAcquiringWrite() throws Exception {
        zombieRequestTo(Application.class);
    }

    /** The control: registered by hand, the interceptor refuses the header and nothing is written. */
    @Test
    void withTheInterceptorRegisteredTheHeaderIsRefused() throws Exception {
        zombieRequestTo(WithInterceptor.class);
    }

    private static void zombieRequestTo(Class<?> application) throws Exception {
        AnnotationConfigWebApplicationContext context = new AnnotationConfigWebApplicationContext();
        context.setServletContext(new MockServletContext());
        context.register(application);
        Throwable startup = catchThrowable(context::refresh);
        try {
            if (startup != null) {
                assertThat(startup).isInstanceOf(FencingConfigurationException.class)
                        .hasMessageContaining("UnadmittedTokenInterceptor");
                return;
            }
            MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
            FencingToken zombie = new FencingToken("ledger", 1, "paused-caller");
            MockHttpServletResponse response = mvc.perform(post("/ledger").content("zombie's entry")
                    .header(FencingHeader.NAME, zombie.toText())).andReturn().getResponse();
            assertThat(context.getBean(Ledger.class).entries()).as("the ledger after the zombie's request")
                    .doesNotContain("zombie's entry");
            assertThat(response.getStatus()).isEqualTo(403);
        } finally {
            context.close();
        }
    }
}

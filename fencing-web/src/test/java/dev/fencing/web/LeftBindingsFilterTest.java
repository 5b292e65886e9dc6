package dev.fencing.web;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.LeftScopes;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.testsupport.LogRecords;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * A request that leaves a binding open on its thread has it closed at its end, and is named at ERROR, so the next
 * request on that pooled thread does not write under its token; a request that closes what it binds, and a binding
 * made around the request, are left alone.
 */
@Timeout(30)
class LeftBindingsFilterTest {

    @RestController
    static class Handler {
        @PostMapping({"/leak/{id}", "/leak-again/{id}", "/leak-filtered/{id}"}) // a line a minute per pattern
        String leak(@PathVariable long id) {
            FencingContext.bind(new FencingToken("accounts:" + id, 5, "leaker")); // never closed
            return "leaked";
        }

        @PostMapping("/tidy/{id}")
        String tidy(@PathVariable long id) {
            try (FencingScope ignored = FencingContext.bind(new FencingToken("accounts:" + id, 6, "tidy"))) {
                return "tidy";
            }
        }
    }

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private final MockMvc mvc = MockMvcBuilders.standaloneSetup(new Handler())
            .addFilters(new LeftBindingsFilter().withMeterRegistry(registry)).build();

    @AfterEach
    void nothingLeft() {
        assertThat(FencingContext.closeAll()).isEmpty();
    }

    @Test
    void aLeftBindingIsClosedAtTheRequestsEndAndNamed() throws Exception {
        try (LogRecords logs = LogRecords.of(LeftScopes.class)) {
            mvc.perform(post("/leak/50"));
            assertThat(FencingContext.current("accounts:50")).as("the next request on this thread").isNull();
            assertThat(logs.records()).singleElement().satisfies(r -> {
                assertThat(r.getLevel()).isEqualTo(Level.SEVERE);
                assertThat(r.getMessage()).startsWith("Request POST /leak/{id} left fencing tokens bound on its "
                        + "thread").contains("accounts:50").contains("leaker").contains("FencingContext.run")
                        .contains("fencing.scopes.left");
            });
            // every leak is counted, also those whose line the pace holds back
            mvc.perform(post("/leak/51"));
            assertThat(logs.records()).hasSize(1);
            assertThat(registry.get(FencingMetrics.LEFT_SCOPES).tag("carrier", "http").counter().count())
                    .isEqualTo(2);
        }
    }

    /**
     * Under the token filter, whose own scope the leak sits on: closed by it and reported the same way, not thrown
     * after the request's answer.
     */
    @Test
    void aLeftBindingUnderTheTokenFiltersScopeIsClosedAndNamedToo() throws Exception {
        MockMvc filtered = MockMvcBuilders.standaloneSetup(new Handler()).addFilters(new LeftBindingsFilter(),
                FencingTokenFilter.forUrlPatterns(java.util.List.of("/leak-filtered/*")).withMeterRegistry(registry))
                .build();
        try (LogRecords logs = LogRecords.of(LeftScopes.class)) {
            int status = filtered.perform(post("/leak-filtered/60").header(FencingHeader.NAME,
                    new FencingToken("accounts:60", 3, "caller").toText())).andReturn().getResponse().getStatus();
            assertThat(status).isEqualTo(200);
            assertThat(FencingContext.isEmpty()).isTrue();
            assertThat(logs.records()).singleElement().satisfies(r -> assertThat(r.getMessage())
                    .startsWith("Request POST /leak-filtered/{id} left fencing tokens bound on its thread")
                    .contains("accounts:60"));
            assertThat(registry.get(FencingMetrics.LEFT_SCOPES).tag("carrier", "http").counter().count())
                    .as("counted by the token filter, which closed it").isEqualTo(1);
        }
    }

    @Test
    void aTidyRequestAndABindingAroundTheRequestAreLeftAlone() throws Exception {
        FencingToken outer = new FencingToken("ledger", 3, "test");
        try (LogRecords logs = LogRecords.of(LeftScopes.class);
             FencingScope ignored = FencingContext.bind(outer)) {
            mvc.perform(post("/tidy/7"));
            mvc.perform(post("/leak-again/8")); // closed down to the binding made around it
            assertThat(FencingContext.current("ledger")).isEqualTo(outer);
            assertThat(FencingContext.current("accounts:8")).isNull();
            assertThat(logs.records()).singleElement()
                    .satisfies(r -> assertThat(r.getMessage()).contains("accounts:8").doesNotContain("ledger"));
            assertThat(registry.get(FencingMetrics.LEFT_SCOPES).counter().count()).isEqualTo(1); // not the tidy one
        }
    }
}

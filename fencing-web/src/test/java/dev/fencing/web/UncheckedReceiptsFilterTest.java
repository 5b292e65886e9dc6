package dev.fencing.web;

import dev.fencing.context.FencingContext;
import dev.fencing.guard.UncheckedReceipts;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.testsupport.LogRecords;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import java.util.List;
import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * The servlet filter reports the tokens of a writing request that completed while no check presented them: the
 * receiving side of "a resource that does not check", which its caller cannot see (it counted the token as sent).
 * A read, a refused request, and a request whose handler checked or sent the token on are not reported.
 */
@Timeout(30)
class UncheckedReceiptsFilterTest {

    @RestController
    static class Accounts {
        /** Writes around the fence: what a trial's service did with an entity saved by dirty checking. */
        @PostMapping("/internal/accounts/{id}/unfenced")
        String unfenced(@PathVariable long id) {
            return "written";
        }

        /** Presents the token, as a @Fenced check does. */
        @PostMapping("/internal/accounts/{id}/fenced")
        String fenced(@PathVariable long id) {
            return FencingContext.present("accounts:" + id) == null ? "none" : "checked";
        }

        /** Sends the token on, as a carrier does (a call to another service with the client interceptor). */
        @PostMapping("/internal/accounts/{id}/forwarded")
        String forwarded(@PathVariable long id) {
            dev.fencing.context.FencingSnapshot snapshot = FencingContext.snapshot();
            snapshot.markSent(snapshot.values());
            return "sent";
        }

        @PostMapping("/internal/accounts/{id}/refused")
        ResponseEntity<String> refused(@PathVariable long id) {
            return ResponseEntity.status(409).body("refused");
        }

        @GetMapping("/internal/accounts/{id}")
        String read(@PathVariable long id) {
            return "read";
        }
    }

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MockMvc mvc = MockMvcBuilders.standaloneSetup(new Accounts())
            .addFilter(FencingTokenFilter.forUrlPatterns(List.of("/internal/*")).withMeterRegistry(registry),
                    "/internal/*").build();

    private double unchecked() {
        return registry.find(FencingMetrics.UNCHECKED_RECEIPTS).tag("resource", "accounts").tag("carrier", "http")
                .counters().stream().mapToDouble(Counter::count).sum();
    }

    private void send(String path, long id) throws Exception {
        mvc.perform(post(path).header(FencingHeader.NAME, new FencingToken("accounts:" + id, 34, "caller").toText()));
    }

    @Test
    void aWriteThatNoCheckSawIsCountedAndLoggedOncePerPlace() throws Exception {
        try (LogRecords logs = LogRecords.of(UncheckedReceipts.class)) {
            send("/internal/accounts/1/unfenced", 1);
            send("/internal/accounts/2/unfenced", 2);
            assertThat(unchecked()).isEqualTo(2);
            assertThat(logs.records()).filteredOn(r -> r.getLevel() == Level.WARNING).singleElement()
                    .satisfies(r -> assertThat(r.getMessage())
                            .startsWith("POST /internal/accounts/{id}/unfenced received the fencing token of "
                                    + "resource 'accounts:1' (value 34, holder 'caller')")
                            .contains("was not fenced").contains(FencingMetrics.UNCHECKED_RECEIPTS));
            assertThat(registry.find(FencingMetrics.UNCHECKED_RECEIPTS).tag("resource", "accounts:1").counter())
                    .as("no entity in a tag").isNull();
        }
    }

    @Test
    void aCheckedWriteAReadAndARefusedRequestAreNotReported() throws Exception {
        send("/internal/accounts/3/fenced", 3);
        send("/internal/accounts/3/refused", 3);
        send("/internal/accounts/3/forwarded", 3);
        mvc.perform(get("/internal/accounts/3")
                .header(FencingHeader.NAME, new FencingToken("accounts:3", 34, "caller").toText()));
        mvc.perform(post("/internal/accounts/3/unfenced")); // no token: nothing received
        assertThat(unchecked()).isZero();
    }
}

package dev.fencing.it.reactive.testing;

import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** Callers send their token in the {@code Fencing-Token} header on {@code /internal/**}. */
@RestController
public class PingController {

    private final PingService pings;

    public PingController(PingService pings) {
        this.pings = pings;
    }

    @PostMapping("/internal/pings/{id}/{amount}")
    public Mono<Long> ping(@PathVariable("id") long id, @PathVariable("amount") long amount) {
        return pings.ping(id, amount);
    }
}

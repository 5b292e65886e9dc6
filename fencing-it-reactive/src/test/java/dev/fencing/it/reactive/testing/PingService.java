package dev.fencing.it.reactive.testing;

import dev.fencing.annotation.Fenced;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

/** Pings under the caller's token. */
@Service
public class PingService {

    private final Pings pings;

    public PingService(Pings pings) {
        this.pings = pings;
    }

    @Fenced(resource = "pings", key = "#id")
    public Mono<Long> ping(long id, long amount) {
        return pings.ping(id, amount);
    }
}

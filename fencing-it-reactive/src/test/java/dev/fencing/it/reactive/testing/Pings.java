package dev.fencing.it.reactive.testing;

import dev.fencing.annotation.Fenced;
import org.springframework.data.r2dbc.repository.Query;
import org.springframework.data.repository.Repository;
import reactor.core.publisher.Mono;

/** A fenced reactive repository method: one resource per id, {@code pings:<id>}. */
public interface Pings extends Repository<Ping, Long> {

    @Fenced(resource = "pings", key = "#id")
    @Query("SELECT CAST(:amount AS BIGINT)")
    Mono<Long> ping(long id, long amount);
}

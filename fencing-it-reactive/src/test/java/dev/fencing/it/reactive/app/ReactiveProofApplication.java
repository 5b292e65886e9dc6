package dev.fencing.it.reactive.app;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The reactive application the proof runs, as a user would write it with the starter: no {@code @EnableFencing} and
 * no fencing bean but the in-process issuer the test adds, only {@code fencing.*} properties. WebFlux on Reactor
 * Netty, Spring Data R2DBC's {@code DatabaseClient} on PostgreSQL, Boot's {@code R2dbcTransactionManager}; the fence
 * is fencing-r2dbc's store, checked on the connection of each {@code @Transactional} reactive method's transaction.
 */
@SpringBootApplication
public class ReactiveProofApplication {
}

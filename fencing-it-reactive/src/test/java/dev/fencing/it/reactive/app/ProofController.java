package dev.fencing.it.reactive.app;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * {@code /internal/**} is covered by {@code fencing.web.reactive.path-patterns}: callers present their token in the
 * {@code Fencing-Token} header. {@code /blocking} blocks on purpose, to show that BlockHound watches the event loop.
 */
@RestController
public class ProofController {

    private final AccountService accounts;
    /** The threads the handlers ran on, newest last. */
    private final Queue<String> handlerThreads = new ConcurrentLinkedQueue<>();

    public ProofController(AccountService accounts) {
        this.accounts = accounts;
    }

    @PostMapping("/internal/accounts/{id}/deposit/{amount}")
    public Mono<Deposit> deposit(@PathVariable("id") long id, @PathVariable("amount") long amount) {
        handlerThreads.add(Thread.currentThread().getName());
        return accounts.deposit(id, amount);
    }

    /** Sleeps on the thread that subscribes, the event loop: a blocking call BlockHound must catch. */
    @GetMapping("/blocking")
    public Mono<String> blocking() {
        handlerThreads.add(Thread.currentThread().getName());
        return Mono.fromCallable(() -> {
            Thread.sleep(1);
            return "slept";
        });
    }

    public Queue<String> handlerThreads() {
        return handlerThreads;
    }
}

package dev.fencing.it.reactive.app;

import dev.fencing.annotation.Fenced;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import reactor.core.publisher.Mono;

/**
 * Deposits in reactive transactions ({@code @Transactional} on a {@code Mono}: Boot's {@code R2dbcTransactionManager}),
 * with the caller's token from the Reactor Context or with a lock the method acquires on subscription.
 */
@Service
public class AccountService {

    /** Signalled by {@link #depositAcquiringThenFail} after its write. */
    public static final class DepositFailed extends RuntimeException {
        public DepositFailed(long id) {
            super("deposit to account " + id + " failed after its write");
        }
    }

    private final AccountRepository accounts;

    public AccountService(AccountRepository accounts) {
        this.accounts = accounts;
    }

    /** With the caller's token: the {@code Fencing-Token} header, or {@code contextWrite(ReactiveFencing.bind(..))}. */
    @Transactional
    public Mono<Deposit> deposit(long id, long amount) {
        return accounts.deposit(id, amount);
    }

    /** Takes the lock on {@code account:<id>} (and its token) when subscribed; releases it when done. */
    @Fenced(resource = "account", key = "#id", acquire = true)
    @Transactional
    public Mono<Deposit> depositAcquiring(long id, long amount) {
        return accounts.deposit(id, amount);
    }

    /** As {@link #depositAcquiring}, then signals {@link DepositFailed}: the transaction rolls back. */
    @Fenced(resource = "account", key = "#id", acquire = true)
    @Transactional
    public Mono<Deposit> depositAcquiringThenFail(long id, long amount) {
        return accounts.deposit(id, amount).then(Mono.error(new DepositFailed(id)));
    }

    /** Takes the lock on {@code account:<id>} and never completes: holds it until the subscription is cancelled. */
    @Fenced(resource = "account", key = "#id", acquire = true)
    public Mono<Void> holdLock(long id) {
        return Mono.never();
    }
}

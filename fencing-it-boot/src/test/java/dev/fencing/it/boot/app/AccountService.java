package dev.fencing.it.boot.app;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Deposits through the JDBC repository, with the caller's token or with one it acquires. */
@Service
public class AccountService {

    /** The balance after a deposit and the token it was written with. */
    public record Deposit(long balance, long token) {
    }

    private final AccountRepository accounts;

    public AccountService(AccountRepository accounts) {
        this.accounts = accounts;
    }

    /** With the token bound by the caller (the {@code Fencing-Token} filter, or {@code FencingContext}). */
    @Transactional
    public Deposit deposit(long id, long amount) {
        return depositBound(id, amount);
    }

    /** Takes the lock (and its token) from the JDBC issuer for the call. */
    @Fenced(resource = "accounts", acquire = true)
    @Transactional
    public Deposit depositAcquiring(long id, long amount) {
        return depositBound(id, amount);
    }

    @Transactional(readOnly = true)
    public long balance(long id) {
        return accounts.findById(id).orElseThrow().balance();
    }

    private Deposit depositBound(long id, long amount) {
        Account account = accounts.save(accounts.findById(id).orElseThrow().plus(amount));
        return new Deposit(account.balance(), FencingContext.current("accounts").value());
    }
}

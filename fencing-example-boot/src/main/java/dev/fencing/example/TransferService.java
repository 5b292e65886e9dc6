package dev.fencing.example;

import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;
import org.springframework.web.server.ResponseStatusException;

/**
 * A transfer takes the locks of both accounts, always the lower id first, so that two opposite transfers
 * (1 to 2 and 2 to 1) queue instead of each holding one lock and waiting for the other. Then {@link Ledger#move}
 * writes both accounts in one transaction, each write checked against its own account's token.
 *
 * <p>The locks are taken outside the transaction, on purpose: the transaction commits while both are still held, so
 * the next holder of either account never has to wait for this transfer's commit on the fence rows. (One method that
 * is both {@code @Transactional} and {@code @Fenced(acquire = true)} holds its lock the same way: the acquiring
 * advisor runs before the transaction's, so the lock is taken before the transaction begins and given back after it
 * ends.) Acquiring two locks takes two proxied calls, though, so this method cannot be one of them.
 */
@Service
public class TransferService {

    private final AccountLocks locks;
    private final Ledger ledger;
    private final AccountRepository accounts;

    public TransferService(AccountLocks locks, Ledger ledger, AccountRepository accounts) {
        this.locks = locks;
        this.ledger = ledger;
        this.accounts = accounts;
    }

    public Transfer transfer(long from, long to, long amount) {
        if (from == to) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "from and to are the same account");
        }
        if (amount <= 0) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "amount must be positive");
        }
        // unknown ids end here, before any lock (the lease table keeps a row per resource ever locked)
        accounts.findById(from).orElseThrow(() -> new AccountNotFoundException(from));
        accounts.findById(to).orElseThrow(() -> new AccountNotFoundException(to));
        long first = Math.min(from, to);
        long second = Math.max(from, to);
        return locks.holding(first, () -> locks.holding(second, () -> ledger.move(from, to, amount)));
    }
}

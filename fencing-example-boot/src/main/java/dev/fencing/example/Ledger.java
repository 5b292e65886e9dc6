package dev.fencing.example;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The writes, one transaction each. The fence checks run inside that transaction (the JDBC fence store joins it),
 * so a refused check rolls back every write of the transaction: a transfer never lands half.
 */
@Service
public class Ledger {

    private final AccountRepository accounts;

    public Ledger(AccountRepository accounts) {
        this.accounts = accounts;
    }

    /** Both writes are fenced, each on its own account with its own token: neither goes unchecked. */
    @Transactional
    public Transfer move(long from, long to, long amount) {
        if (accounts.withdraw(from, amount) == 0) {
            throw accounts.findById(from).isPresent()
                    ? new InsufficientFundsException(from, amount)
                    : new AccountNotFoundException(from);
        }
        if (accounts.deposit(to, amount) == 0) {
            throw new AccountNotFoundException(to);      // unchecked: rolls the withdrawal back
        }
        return new Transfer(from, to, amount, balance(from), balance(to));
    }

    /** A deposit under whatever token the caller bound (here: the Fencing-Token header of an internal call). */
    @Transactional
    public Account deposit(long id, long amount) {
        if (accounts.deposit(id, amount) == 0) {
            throw new AccountNotFoundException(id);
        }
        return accounts.findById(id).orElseThrow(() -> new AccountNotFoundException(id));
    }

    private long balance(long id) {
        return accounts.findById(id).orElseThrow(() -> new AccountNotFoundException(id)).getBalance();
    }
}

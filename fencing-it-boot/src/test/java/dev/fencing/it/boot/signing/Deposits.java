package dev.fencing.it.boot.signing;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Deposits under the token the caller's request bound (the check and the write in one transaction). */
@Service
public class Deposits {

    private final Ledger ledger;

    public Deposits(Ledger ledger) {
        this.ledger = ledger;
    }

    @Transactional
    public long deposit(long id, long amount) {
        return ledger.deposit(id, amount);
    }
}

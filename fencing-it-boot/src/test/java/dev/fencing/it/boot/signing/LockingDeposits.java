package dev.fencing.it.boot.signing;

import dev.fencing.annotation.Fenced;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Deposits under a lock this application takes itself; absent with {@code proof.acquiring=false}. */
@Service
@ConditionalOnBooleanProperty(name = "proof.acquiring", matchIfMissing = true)
public class LockingDeposits {

    private final Ledger ledger;

    public LockingDeposits(Ledger ledger) {
        this.ledger = ledger;
    }

    @Fenced(resource = "accounts", key = "#id", acquire = true)
    @Transactional
    public long deposit(long id, long amount) {
        return ledger.deposit(id, amount);
    }
}

package dev.fencing.it.boot.signing;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code /internal/**} is where {@code fencing.web.filter.url-patterns} accepts callers' tokens; {@code /accounts/**}
 * takes the lock itself (404 where {@link LockingDeposits} is absent).
 */
@RestController
public class DepositController {

    private final Deposits deposits;
    private final ObjectProvider<LockingDeposits> locking;

    public DepositController(Deposits deposits, ObjectProvider<LockingDeposits> locking) {
        this.deposits = deposits;
        this.locking = locking;
    }

    @PostMapping("/internal/accounts/{id}/deposit/{amount}")
    public long depositWithCallersToken(@PathVariable("id") long id, @PathVariable("amount") long amount) {
        return deposits.deposit(id, amount);
    }

    @PostMapping("/accounts/{id}/deposit/{amount}")
    public long depositUnderOwnLock(@PathVariable("id") long id, @PathVariable("amount") long amount) {
        return locking.getObject().deposit(id, amount);
    }
}

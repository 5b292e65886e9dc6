package dev.fencing.it.boot.app;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code /internal/**} is covered by {@code fencing.web.filter.url-patterns}: callers present their token in the
 * {@code Fencing-Token} header. {@code /accounts/**} takes the lock itself.
 */
@RestController
public class ProofController {

    private final AccountService accounts;

    public ProofController(AccountService accounts) {
        this.accounts = accounts;
    }

    @PostMapping("/internal/accounts/{id}/deposit/{amount}")
    public AccountService.Deposit depositWithCallersToken(@PathVariable("id") long id,
                                                          @PathVariable("amount") long amount) {
        return accounts.deposit(id, amount);
    }

    @PostMapping("/accounts/{id}/deposit/{amount}")
    public AccountService.Deposit depositAcquiring(@PathVariable("id") long id, @PathVariable("amount") long amount) {
        return accounts.depositAcquiring(id, amount);
    }

    @GetMapping("/accounts/{id}")
    public long balance(@PathVariable("id") long id) {
        return accounts.balance(id);
    }
}

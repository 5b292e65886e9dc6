package dev.fencing.example;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import java.net.URI;

/**
 * The public API. Fencing's refusals (409 stale, 428 missing, 503 busy or lock not acquired) are answered as problem
 * details by the starter's {@code FencingExceptionAdvice}; this application's own errors are problem details too.
 */
@RestController
public class AccountController {

    public record NewAccount(String owner, long balance) {
    }

    public record TransferRequest(long from, long to, long amount) {
    }

    public record DepositRequest(long amount) {
    }

    private final AccountRepository accounts;
    private final TransferService transfers;
    private final Ledger ledger;

    public AccountController(AccountRepository accounts, TransferService transfers, Ledger ledger) {
        this.accounts = accounts;
        this.transfers = transfers;
        this.ledger = ledger;
    }

    @PostMapping("/accounts")
    public ResponseEntity<Account> create(@RequestBody NewAccount request) {
        if (request.owner() == null || request.owner().isBlank() || request.balance() < 0) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "owner is required, balance must be >= 0");
        }
        Account account = accounts.save(new Account(request.owner(), request.balance()));
        return ResponseEntity.created(URI.create("/accounts/" + account.getId())).body(account);
    }

    @GetMapping("/accounts/{id}")
    public Account get(@PathVariable("id") long id) {
        return accounts.findById(id).orElseThrow(() -> new AccountNotFoundException(id));
    }

    @PostMapping("/transfers")
    public Transfer transfer(@RequestBody TransferRequest request) {
        return transfers.transfer(request.from(), request.to(), request.amount());
    }

    /**
     * For a trusted internal caller that holds the account's lock itself and sends its token in the
     * {@code Fencing-Token} header ({@code fencing.web.filter.url-patterns} covers {@code /internal/*} only). The
     * deposit is checked against that token: one from a holder that lost its lock is refused with 409.
     */
    @PostMapping("/internal/accounts/{id}/deposits")
    public Account deposit(@PathVariable("id") long id, @RequestBody DepositRequest request) {
        if (request.amount() <= 0) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "amount must be positive");
        }
        return ledger.deposit(id, request.amount());
    }
}

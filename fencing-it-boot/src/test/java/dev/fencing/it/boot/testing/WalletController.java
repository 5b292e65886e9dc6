package dev.fencing.it.boot.testing;

import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** Callers send their token in the {@code Fencing-Token} header on {@code /internal/*}. */
@RestController
public class WalletController {

    private final WalletService wallets;

    public WalletController(WalletService wallets) {
        this.wallets = wallets;
    }

    @PostMapping("/internal/wallets/{id}/deposits/{amount}")
    public String deposit(@PathVariable long id, @PathVariable long amount) {
        wallets.deposit(id, amount);
        return "deposited";
    }
}

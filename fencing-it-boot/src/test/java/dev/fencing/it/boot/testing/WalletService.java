package dev.fencing.it.boot.testing;

import dev.fencing.annotation.Fenced;
import org.springframework.stereotype.Service;

/** Deposits through the fenced repository, under the caller's token (the controller's callers send it). */
@Service
public class WalletService {

    private final WalletRepository wallets;

    public WalletService(WalletRepository wallets) {
        this.wallets = wallets;
    }

    @Fenced(resource = "wallets", key = "#id")
    public void deposit(long id, long amount) {
        wallets.deposit(id, amount);
    }
}

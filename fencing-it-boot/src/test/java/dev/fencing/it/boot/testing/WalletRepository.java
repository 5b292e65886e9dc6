package dev.fencing.it.boot.testing;

import dev.fencing.annotation.Fenced;
import org.springframework.data.jdbc.repository.query.Modifying;
import org.springframework.data.jdbc.repository.query.Query;
import org.springframework.data.repository.CrudRepository;

/** The fenced write: one wallet is one resource, {@code wallets:<id>}. */
public interface WalletRepository extends CrudRepository<Wallet, Long> {

    @Fenced(resource = "wallets", key = "#id")
    @Modifying
    @Query("UPDATE tested_wallet SET balance = balance + :amount WHERE id = :id")
    int deposit(long id, long amount);
}

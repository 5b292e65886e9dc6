package dev.fencing.example;

import dev.fencing.annotation.Fenced;
import org.springframework.data.jpa.repository.Modifying;
import org.springframework.data.jpa.repository.Query;
import org.springframework.data.repository.Repository;

import java.util.Optional;

/**
 * The resource side: every write to an existing account checks the caller's token for {@code accounts:<id>}, each
 * account its own fenced resource. A plain {@code Repository} rather than {@code JpaRepository}, so that no
 * inherited {@code save}/{@code delete*} can write around the fence.
 */
// tag::repository[]
public interface AccountRepository extends Repository<Account, Long> {

    Optional<Account> findById(Long id);

    /**
     * Inserts a new account. Not fenced: its id does not exist before the insert, so nothing can race with it, and
     * {@link Account} has no setters, so saving an existing one changes nothing.
     */
    Account save(Account account);

    /** Takes {@code amount} off the balance if it covers it; returns the rows changed (0: missing or too poor). */
    @Fenced(resource = "accounts", key = "#id")
    @Modifying(flushAutomatically = true, clearAutomatically = true)
    @Query("update Account a set a.balance = a.balance - :amount where a.id = :id and a.balance >= :amount")
    int withdraw(Long id, long amount);

    /** Adds {@code amount} to the balance; returns the rows changed (0: no such account). */
    @Fenced(resource = "accounts", key = "#id")
    @Modifying(flushAutomatically = true, clearAutomatically = true)
    @Query("update Account a set a.balance = a.balance + :amount where a.id = :id")
    int deposit(Long id, long amount);
}
// end::repository[]

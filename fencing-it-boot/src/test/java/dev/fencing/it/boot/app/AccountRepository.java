package dev.fencing.it.boot.app;

import dev.fencing.annotation.Fenced;
import org.springframework.data.repository.CrudRepository;

/** Spring Data JDBC: every write the application makes goes through the fenced {@code save}. */
public interface AccountRepository extends CrudRepository<Account, Long> {

    @Override
    @Fenced(resource = "accounts")
    <S extends Account> S save(S account);
}

package dev.fencing.example;

import dev.fencing.annotation.Fenced;
import org.springframework.stereotype.Component;

import java.util.function.Supplier;

/**
 * The client side: takes the lock of one account from the token issuer ({@code fencing.issuer.type=jdbc}), binds
 * its token for {@code accounts:<id>} while {@code work} runs, and releases the lock afterwards. A bean of its own
 * because {@code @Fenced} works through the Spring proxy: a call from inside the same bean would not acquire.
 */
@Component
public class AccountLocks {

    @Fenced(resource = "accounts", key = "#accountId", acquire = true)
    public <T> T holding(long accountId, Supplier<T> work) {
        return work.get();
    }
}

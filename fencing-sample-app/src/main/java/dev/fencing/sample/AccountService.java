package dev.fencing.sample;

import dev.fencing.annotation.Fenced;

/** The client side: opens a critical section on one account (acquiring its lock and token), then works in it. */
public class AccountService {

    @Fenced(resource = "accounts", key = "#account", acquire = true)
    public void withLock(String account, Runnable work) {
        work.run();
    }
}

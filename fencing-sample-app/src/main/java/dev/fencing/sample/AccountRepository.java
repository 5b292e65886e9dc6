package dev.fencing.sample;

import dev.fencing.annotation.Fenced;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The protected resource: a store of account notes. Its write is fenced per account. */
public class AccountRepository {

    private final Map<String, String> rows = new ConcurrentHashMap<>();

    @Fenced(resource = "accounts", key = "#account")
    public void write(String account, String value) {
        rows.put(account, value);
    }

    /** Reads are not fenced. */
    public String read(String account) {
        return rows.get(account);
    }
}

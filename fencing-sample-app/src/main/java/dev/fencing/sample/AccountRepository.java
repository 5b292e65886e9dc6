package dev.fencing.sample;

import dev.fencing.annotation.Fenced;

/** The protected resource through the library's annotation: a note per account, fenced per account. */
public class AccountRepository {

    private final SampleDatabase db;

    AccountRepository(SampleDatabase db) {
        this.db = db;
    }

    @Fenced(resource = "accounts", key = "#account")
    public void write(String account, String value) {
        db.put("accounts:" + account, value);
    }

    /** Reads are not fenced. */
    public String read(String account) {
        return db.read("accounts:" + account);
    }
}

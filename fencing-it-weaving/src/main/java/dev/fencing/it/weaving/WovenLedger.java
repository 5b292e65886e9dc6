package dev.fencing.it.weaving;

import dev.fencing.annotation.Fenced;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Method-level fences, including the private and final methods only weaving can reach. */
public class WovenLedger {

    public final List<String> entries = new CopyOnWriteArrayList<>();

    @Fenced(resource = "woven-ledger")
    public void append(String entry) {
        entries.add(entry);
    }

    @Fenced(resource = "woven-accounts", key = "#accountId")
    public void credit(long accountId, String entry) {
        entries.add(accountId + ":" + entry);
    }

    public void appendViaPrivate(String entry) {
        appendPrivately(entry);
    }

    @Fenced(resource = "woven-ledger")
    private void appendPrivately(String entry) {
        entries.add("private " + entry);
    }

    @Fenced(resource = "woven-ledger")
    public final void appendFinal(String entry) {
        entries.add("final " + entry);
    }

    /** Not fenced. */
    public int size() {
        return entries.size();
    }
}

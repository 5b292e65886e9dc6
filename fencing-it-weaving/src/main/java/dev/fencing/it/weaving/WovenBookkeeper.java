package dev.fencing.it.weaving;

import dev.fencing.annotation.Fenced;

/** The client side, woven: acquires a token for the ledger and writes through it. */
public class WovenBookkeeper {

    private final WovenLedger ledger;

    public WovenBookkeeper(WovenLedger ledger) {
        this.ledger = ledger;
    }

    @Fenced(resource = "woven-ledger", acquire = true)
    public void bookWith(Runnable body) {
        body.run();
    }

    @Fenced(resource = "woven-ledger", acquire = true)
    public void book(String entry) {
        ledger.append(entry);
    }
}

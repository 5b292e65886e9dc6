package dev.fencing.shedlock;

import dev.fencing.annotation.Fenced;

/** The ledger with the fence on: each write presents the bound token for "ledger" to the JDBC fence store. */
public class FencedLedger implements Ledger {

    private final LedgerRows rows;

    FencedLedger(LedgerRows rows) {
        this.rows = rows;
    }

    @Override
    @Fenced(resource = SchedulerApp.RESOURCE)
    public void write(String value) {
        rows.write(value);
    }
}

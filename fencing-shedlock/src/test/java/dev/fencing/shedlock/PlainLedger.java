package dev.fencing.shedlock;

/** The ledger with the fence off: ShedLock as applications run it today, every write lands. */
public class PlainLedger implements Ledger {

    private final LedgerRows rows;

    PlainLedger(LedgerRows rows) {
        this.rows = rows;
    }

    @Override
    public void write(String value) {
        rows.write(value);
    }
}

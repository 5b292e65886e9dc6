package dev.fencing.shedlock;

/** The resource the scheduled job writes: one row whose value the last accepted write set. */
public interface Ledger {

    /** Sets the row's value (and the token it was written with, 0 without one). */
    void write(String value);
}

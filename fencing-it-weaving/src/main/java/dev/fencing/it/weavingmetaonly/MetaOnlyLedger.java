package dev.fencing.it.weavingmetaonly;

import dev.fencing.it.weavingmeta.LedgerWrite;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Fenced only through the composed {@link LedgerWrite}: woven by no aspect at all. */
public class MetaOnlyLedger {

    public final List<String> entries = new CopyOnWriteArrayList<>();

    @LedgerWrite
    public void append(String entry) {
        entries.add(entry);
    }
}

package dev.fencing.it.weavingmeta;

import dev.fencing.annotation.Fenced;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One method with {@code @Fenced} itself (woven), an overload of it fenced through the composed {@link LedgerWrite}
 * (not woven by FencingAspect: its body is still moved into {@code append_aroundBodyN} for the other overload's name).
 */
public class MetaLedger {

    public final List<String> entries = new CopyOnWriteArrayList<>();

    @Fenced(resource = "meta-ledger")
    public void append(String entry) {
        entries.add(entry);
    }

    @LedgerWrite
    public void append(String entry, int times) {
        for (int i = 0; i < times; i++) {
            entries.add(entry);
        }
    }
}

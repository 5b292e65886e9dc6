package dev.fencing.it.weavingmetaonly;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Fenced only through the composed type-level {@link LedgerService}; not a bean (the startup check reads it). */
@LedgerService
public class MetaOnlyService {

    public final List<String> entries = new CopyOnWriteArrayList<>();

    public void record(String entry) {
        entries.add(entry);
    }
}

package dev.fencing.it.weavingtx;

import dev.fencing.annotation.Fenced;
import org.springframework.transaction.annotation.Transactional;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** {@code @Transactional} and {@code @Fenced} on one woven method: the check must join the transaction. */
public class TxFencedLedger {

    public final List<String> entries = new CopyOnWriteArrayList<>();

    @Transactional
    @Fenced(resource = "tx-ledger")
    public void append(String entry) {
        entries.add(entry);
    }
}

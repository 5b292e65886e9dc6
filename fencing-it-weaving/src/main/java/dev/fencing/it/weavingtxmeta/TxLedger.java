package dev.fencing.it.weavingtxmeta;

import dev.fencing.it.weavingmeta.LedgerWrite;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A transactional write fenced through the composed {@link LedgerWrite}: spring-aspects' woven transaction aspect
 * advises it (so ajc moves its body into {@code append_aroundBody..}), FencingAspect does not (its pointcuts match
 * {@code @Fenced} itself only).
 */
public class TxLedger {

    public final List<String> entries = new CopyOnWriteArrayList<>();

    @Transactional
    @LedgerWrite
    public void append(String entry) {
        entries.add(entry + (TransactionSynchronizationManager.isActualTransactionActive() ? "" : " (no transaction)"));
    }
}

package dev.fencing.it.weavingtx;

import dev.fencing.spring.EnableFencing;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** ASPECTJ fence and transactions over {@link TxFencedLedger}, with a store that records where it checks. */
@Configuration
@EnableFencing(mode = AdviceMode.ASPECTJ)
@EnableTransactionManagement(mode = AdviceMode.ASPECTJ)
public class TxFencedConfig {

    /** Per check: whether a transaction was active when the store checked. */
    public static final List<Boolean> CHECKED_IN_TRANSACTION = new CopyOnWriteArrayList<>();

    @Bean
    TxFencedLedger txFencedLedger() {
        return new TxFencedLedger();
    }

    @Bean
    FenceStore fenceStore() {
        InMemoryFenceStore delegate = new InMemoryFenceStore();
        return new FenceStore() {
            @Override
            public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
                CHECKED_IN_TRANSACTION.add(TransactionSynchronizationManager.isActualTransactionActive());
                return delegate.fence(resource, token, write);
            }
        };
    }

    @Bean
    PlatformTransactionManager transactionManager() {
        return new NoResourceTransactionManager();
    }
}

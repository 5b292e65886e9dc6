package dev.fencing.it.ltw;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.it.weavingtx.TxFencedConfig;
import dev.fencing.it.weavingtx.TxFencedLedger;
import dev.fencing.it.weavingtxmeta.TxConfig;
import dev.fencing.it.weavingtxmeta.TxLedger;
import dev.fencing.spring.support.WovenFence;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * spring-aspects' woven {@code @Transactional} beside FencingAspect under the load-time weaver, as docs/weaving.md
 * recommends: the ASPECTJ startup check tells a method FencingAspect fenced from one only the transaction aspect wove.
 */
class WovenTransactionsTest {

    @AfterEach
    void clean() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    /**
     * {@code @Transactional} and a composed {@code @Fenced} ({@code @LedgerWrite}): the transaction aspect moves the
     * body into {@code append_aroundBodyN}, FencingAspect does not fence it. Startup fails naming the method (it
     * started, and the method ran with no token: the check took the transaction aspect's woven body for the fence's).
     */
    @Test
    @Timeout(60)
    void aTransactionalMethodWithAComposedFenceFailsStartup() throws NoSuchMethodException {
        assertThat(TxLedger.class.getDeclaredMethods())
                .anySatisfy(m -> assertThat(m.getName()).startsWith("append_aroundBody"));
        assertThat(TxLedger.class.getMethod("append", String.class).isAnnotationPresent(WovenFence.class)).isFalse();
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(TxConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("TxLedger.append(String) gets @Fenced from @LedgerWrite")
                .hasMessageContaining("put @Fenced(resource = \"meta-ledger\") itself on TxLedger.append(String)");
    }

    /**
     * docs/weaving.md: with spring-aspects woven too, "the transaction aspect then runs outside the fence". Here the
     * fence's advice is not inlined (the transaction aspect's closure wraps it), and the startup check still finds the
     * method fenced.
     */
    @Test
    @Timeout(60)
    void theCheckOfAWovenTransactionalMethodJoinsItsTransaction() {
        TxFencedConfig.CHECKED_IN_TRANSACTION.clear();
        try (AnnotationConfigApplicationContext context =
                     new AnnotationConfigApplicationContext(TxFencedConfig.class)) {
            TxFencedLedger ledger = context.getBean(TxFencedLedger.class);
            FencingContext.run(new FencingToken("tx-ledger", 1, "h"), () -> ledger.append("x"));
            assertThat(ledger.entries).containsExactly("x");
            assertThat(TxFencedConfig.CHECKED_IN_TRANSACTION).containsExactly(true);
        }
    }
}

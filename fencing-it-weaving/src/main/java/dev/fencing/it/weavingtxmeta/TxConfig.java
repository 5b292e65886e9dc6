package dev.fencing.it.weavingtxmeta;

import dev.fencing.it.weavingtx.NoResourceTransactionManager;
import dev.fencing.spring.EnableFencing;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/**
 * ASPECTJ mode for the fence and for transactions (docs/weaving.md, "With Spring Boot": spring-aspects as a second
 * aspect library and {@code @EnableTransactionManagement(mode = ASPECTJ)}) over {@link TxLedger}. In a package of its
 * own: the startup check reads every fenced class under it.
 */
@Configuration
@EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true)
@EnableTransactionManagement(mode = AdviceMode.ASPECTJ)
public class TxConfig {

    @Bean
    TxLedger txLedger() {
        return new TxLedger();
    }

    @Bean
    PlatformTransactionManager transactionManager() {
        return new NoResourceTransactionManager();
    }
}

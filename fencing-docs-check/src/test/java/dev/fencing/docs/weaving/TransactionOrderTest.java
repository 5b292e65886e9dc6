package dev.fencing.docs.weaving;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.context.FencingContext;
import dev.fencing.docs.Databases;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.spring.EnableFencing;
import dev.fencing.token.FencingToken;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

class TransactionOrderTest {

    @Configuration
    static class Beans {
        @Bean DataSource dataSource() { return Databases.h2("order", "schema-h2.sql"); }
        @Bean PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
        @Bean JdbcFenceStore fenceStore(DataSource dataSource, PlatformTransactionManager transactionManager) {
            return JdbcFenceStore.builder(dataSource).transactionManager(transactionManager).build();
        }
        @Bean TokenIssuer tokenIssuer() { return new InMemoryTokenIssuer(); }
        @Bean LedgerService ledgerService() { return new LedgerService(); }
    }

    /** Equal orders, the fence advisor registered first: it would run outside the transaction. */
    @Configuration
    @EnableFencing
    @EnableTransactionManagement
    static class Unordered {
    }

    @Test
    void orderedTheFenceRunsInsideTheTransaction() {
        try (var context = new AnnotationConfigApplicationContext(TransactionalFencingConfig.class, Beans.class)) {
            FencingContext.run(new FencingToken("ledger:7", 1, "h"),
                    () -> context.getBean(LedgerService.class).post(7, 100));
            assertThat(context.getBean(LedgerService.class)).isNotNull();
        }
    }

    @Test
    void unorderedStartupFails() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(Unordered.class, Beans.class).close())
                .hasStackTraceContaining("@Transactional");
    }
}

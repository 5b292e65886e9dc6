package dev.fencing.docs.stores;

import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;

/**
 * docs/stores.md: two R2DBC connection factories in Spring Boot, the store's primary. Compiled here; that a fenced
 * call is refused when the two managers' transactions are nested, either way, is tested by fencing-r2dbc's contract
 * and the autoconfigure module's FencingReactiveApplicationTest.
 */
@Configuration(proxyBeanMethods = false)
class TwoConnectionFactoriesConfig {

    // tag::two-connection-factories[]
    @Bean
    @Primary
    ConnectionFactory connectionFactory() {                      // the store's database
        return ConnectionFactories.get("r2dbc:pool:postgresql://app@db.internal:5432/app");
    }

    @Bean
    @Primary
    R2dbcTransactionManager transactionManager(ConnectionFactory connectionFactory) {
        return new R2dbcTransactionManager(connectionFactory);
    }

    @Bean
    ConnectionFactory otherCf() {
        return ConnectionFactories.get("r2dbc:pool:mariadb://app@other.internal:3306/app");
    }

    @Bean
    R2dbcTransactionManager otherTm(@Qualifier("otherCf") ConnectionFactory otherCf) {
        return new R2dbcTransactionManager(otherCf);
    }
    // end::two-connection-factories[]
}

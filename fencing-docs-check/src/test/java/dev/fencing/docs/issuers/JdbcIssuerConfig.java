package dev.fencing.docs.issuers;

import dev.fencing.jdbc.JdbcTokenIssuer;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** docs/issuers.md: the database lease. IssuersTest starts it on H2 with the shipped lease script. */
@Configuration
public class JdbcIssuerConfig {

    // tag::jdbc-issuer[]
    @Bean
    JdbcTokenIssuer tokenIssuer(DataSource dataSource, MeterRegistry registry) {
        return JdbcTokenIssuer.builder(dataSource).leaseTime(Duration.ofSeconds(30)).meterRegistry(registry).build();
    }
    // end::jdbc-issuer[]
}

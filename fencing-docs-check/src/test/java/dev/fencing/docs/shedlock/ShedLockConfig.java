package dev.fencing.docs.shedlock;

import javax.sql.DataSource;
import dev.fencing.shedlock.EnableSchedulerLockFencing;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;

/** docs/issuers.md, ShedLock jobs: ShedLockTest starts it on H2 with a TokenIssuer and a fenced repository. */
// tag::shedlock[]
@Configuration
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT10M")
@EnableSchedulerLockFencing(resources = "nightly-interest=accounts", mappedOnly = true)
public class ShedLockConfig {  // plus fencing as usual: the starter with fencing.issuer.type, or @EnableFencing
    @Bean
    LockProvider lockProvider(DataSource dataSource) {   // ShedLock's own provider, unchanged: it is wrapped
        return new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                .withJdbcTemplate(new JdbcTemplate(dataSource)).usingDbTime().build());
    }
}
// end::shedlock[]

package dev.fencing.docs.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.docs.Databases;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.shedlock.FencingLockProvider;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import org.springframework.jdbc.core.JdbcTemplate;

/** The ShedLock examples of docs/issuers.md, started: the job runs with a token for "accounts". */
class ShedLockTest {

    @Configuration(proxyBeanMethods = false)
    @EnableFencing
    static class Fencing {
    }

    @Test
    void theConfigurationFencesTheJob() throws InterruptedException {
        DataSource dataSource = Databases.h2("shedlock");
        new JdbcTemplate(dataSource).execute("CREATE TABLE shedlock (name VARCHAR(64) NOT NULL PRIMARY KEY, "
                + "lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL)");
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test",
                    Map.of("interest.cron", "* * * * * *")));
            context.registerBean(DataSource.class, () -> dataSource);
            context.registerBean(TokenIssuer.class, () -> new InMemoryTokenIssuer());
            context.registerBean(InMemoryFenceStore.class, () -> new InMemoryFenceStore());
            context.registerBean(InterestJob.Accounts.class);
            context.registerBean(InterestJob.class);
            context.register(Fencing.class, ShedLockConfig.class);
            context.refresh();
            assertThat(context.getBean(LockProvider.class)).isInstanceOf(FencingLockProvider.class);
            InterestJob.Accounts accounts = context.getBean(InterestJob.Accounts.class);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (accounts.tokens().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(accounts.tokens()).isNotEmpty().first().isEqualTo(1L);
        }
    }

    @Test
    void theBuilderWrapsAProviderByHand() {
        DataSource dataSource = Databases.h2("shedlock-builder");
        TokenIssuer issuer = new InMemoryTokenIssuer();
        // tag::builder[]
        LockProvider lockProvider = FencingLockProvider.builder(
                        new JdbcTemplateLockProvider(new JdbcTemplate(dataSource), "shedlock"), issuer)
                .resources("nightly-interest", "accounts")   // lock name -> the @Fenced resources its job writes
                .mappedOnly(true)                             // an unmapped lock name is refused, not fenced by name
                .acquireTimeout(Duration.ofSeconds(5))        // waiting for the issuer once ShedLock granted the lock
                .build();
        // end::builder[]
        assertThat(((FencingLockProvider) lockProvider).resourcesFor("nightly-interest")).containsExactly("accounts");
    }
}

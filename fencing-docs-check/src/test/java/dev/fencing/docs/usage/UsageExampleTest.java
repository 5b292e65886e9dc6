package dev.fencing.docs.usage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.MissingTokenException;
import dev.fencing.docs.Databases;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.rule.StaleTokenException;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

class UsageExampleTest {

    /** What the README leaves out: the database, its transaction manager and the two beans. */
    @Configuration
    static class Application {
        @Bean DataSource dataSource() { return Databases.h2("usage", "schema-h2.sql", "lease-h2.sql"); }
        @Bean PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
        @Bean AccountRepository accountRepository(DataSource dataSource) {
            return new JdbcAccountRepository(dataSource);
        }
        @Bean TransferService transferService(AccountRepository accountRepository) {
            return new TransferService(accountRepository);
        }
    }

    static class JdbcAccountRepository implements AccountRepository {
        private final JdbcTemplate jdbc;

        JdbcAccountRepository(DataSource dataSource) {
            this.jdbc = new JdbcTemplate(dataSource);
            jdbc.execute("CREATE TABLE IF NOT EXISTS account (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)");
        }

        @Override
        public void deposit(long accountId, long amount) {
            if (jdbc.update("UPDATE account SET balance = balance + ? WHERE id = ?", amount, accountId) == 0) {
                jdbc.update("INSERT INTO account (id, balance) VALUES (?, ?)", accountId, amount);
            }
        }
    }

    private AnnotationConfigApplicationContext context;

    @BeforeEach
    void start() {
        context = new AnnotationConfigApplicationContext(FencingConfig.class, Application.class);
    }

    @AfterEach
    void stop() {
        context.close();
    }

    @Test
    void theClientSideAcquiresAndTheResourceSideChecks() {
        context.getBean(TransferService.class).deposit(42, 100);
        context.getBean(TransferService.class).deposit(42, 5);

        assertThat(new JdbcTemplate(context.getBean(DataSource.class))
                .queryForObject("SELECT balance FROM account WHERE id = 42", Long.class)).isEqualTo(105);
    }

    @Test
    void withoutATokenTheRepositoryRefuses() {
        assertThatThrownBy(() -> context.getBean(AccountRepository.class).deposit(42, 100))
                .isInstanceOf(MissingTokenException.class);
    }

    @Test
    void bindingByHandAndAStaleToken() throws Exception {
        TokenIssuer issuer = context.getBean(TokenIssuer.class);
        AccountRepository repository = context.getBean(AccountRepository.class);
        Lease older = issuer.acquire("accounts:42", Duration.ofSeconds(5));
        older.close();
        Lease lease = issuer.acquire("accounts:42", Duration.ofSeconds(5));

        // tag::bind[]
        try (FencingScope scope = FencingContext.bind(lease.token())) {
            repository.deposit(42, 100);
        }
        // end::bind[]

        try (FencingScope scope = FencingContext.bind(older.token())) {
            assertThatThrownBy(() -> repository.deposit(42, 1)).isInstanceOf(StaleTokenException.class);
        }
        lease.close();
    }
}

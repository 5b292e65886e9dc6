package dev.fencing.docs.usage;

// The README's Usage example. UsageExampleTest starts it on H2 and runs a write through both sides.

// tag::usage[]
import dev.fencing.annotation.Fenced;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.spring.EnableFencing;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;

@Configuration
@EnableFencing                                   // Spring proxies; mode = ASPECTJ for woven code
class FencingConfig {
    @Bean TokenIssuer tokenIssuer() { return new InMemoryTokenIssuer(); } // demo only: use a durable issuer
    @Bean JdbcFenceStore fenceStore(DataSource dataSource, PlatformTransactionManager transactionManager) {
        return JdbcFenceStore.builder(dataSource).transactionManager(transactionManager).build();
    }                                            // required: no FenceStore bean, no startup
}

interface AccountRepository {                    // the resource side: checks the token on every write
    @Fenced(resource = "accounts", key = "#accountId")
    void deposit(long accountId, long amount);
}

class TransferService {                          // the client side: opens the critical section
    private final AccountRepository repository;

    TransferService(AccountRepository repository) { this.repository = repository; }

    @Fenced(resource = "accounts", key = "#accountId", acquire = true)
    public void deposit(long accountId, long amount) { repository.deposit(accountId, amount); }
}
// end::usage[]

package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Every {@code @Fenced} method is checked when a lazily initialized context starts too
 * ({@code spring.main.lazy-initialization=true}, which SpringApplication applies with Boot's
 * LazyInitializationBeanFactoryPostProcessor, or {@code @Lazy}), also for the common shape of a repository bean
 * declared by its interface, {@code @Bean AccountRepository accounts() { return new JdbcAccountRepository(..); }},
 * with the fence on the implementation: the definition's type, the interface, shows no {@code @Fenced} method, so the
 * classes under the application's packages (here the configuration's) that implement it are checked. Without that, a
 * key naming an unknown parameter started and failed on the first call, a {@code fencing.modes} entry for the
 * implementation's resource failed startup as "no @Fenced method declares", and keyed and unkeyed checks of one
 * resource started.
 */
@Timeout(60)
class LazyBeanChecksTest {

    public interface AccountRepository {
        void deposit(long id, long amount);
    }

    /** The implementation carries the fence; its key names a parameter that does not exist (a typo). */
    public static class JdbcAccountRepository implements AccountRepository {
        @Override
        @Fenced(resource = "accounts", key = "#acountId")
        public void deposit(long id, long amount) {
        }
    }

    public interface LedgerRepository {
        void post(long id, long amount);
    }

    /** A correct fence, on a resource named only here. */
    public static class JdbcLedgerRepository implements LedgerRepository {
        @Override
        @Fenced(resource = "ledgers", key = "#id")
        public void post(long id, long amount) {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class TypoConfig {
        @Bean
        AccountRepository accountRepository() {
            return new JdbcAccountRepository();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class GoodConfig {
        @Bean
        LedgerRepository ledgerRepository() {
            return new JdbcLedgerRepository();
        }
    }

    private final ApplicationContextRunner lazy = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
            .withBean(LazyInitializationBeanFactoryPostProcessor.class) // spring.main.lazy-initialization=true
            .withPropertyValues("fencing.store.type=in-memory");

    @Test
    void aKeyTypoOnALazyInterfaceTypedBeanFailsStartup() {
        // eager, the same bean fails startup naming the key
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
                .withUserConfiguration(TypoConfig.class).withPropertyValues("fencing.store.type=in-memory")
                .run(context -> assertThat(context).hasFailed());
        lazy.withUserConfiguration(TypoConfig.class).run(context -> {
            if (context.getStartupFailure() != null) {
                return;
            }
            AccountRepository accounts = context.getBean(AccountRepository.class);
            Throwable first = null;
            try {
                FencingContext.run(new FencingToken("accounts:1", 1, "a"), () -> accounts.deposit(1, 10));
            } catch (Throwable e) {
                first = e;
            }
            throw new AssertionError("started with the key typo; the first call: " + first);
        });
    }

    @Test
    void aModeForTheResourceOfALazyInterfaceTypedBeanStarts() {
        lazy.withUserConfiguration(GoodConfig.class).withPropertyValues("fencing.modes.ledgers=observe")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    // created on first use, proxied and checked
                    LedgerRepository ledgers = context.getBean(LedgerRepository.class);
                    assertThat(org.springframework.aop.support.AopUtils.isAopProxy(ledgers)).isTrue();
                    FencingContext.run(new FencingToken("ledgers:1", 1, "a"), () -> ledgers.post(1, 10));
                });
    }

    /** Every order, unkeyed: the lock and max_seen of 'orders', apart from each 'orders:<id>'. */
    public interface OrderTotals {
        void recompute();
    }

    public static class JdbcOrderTotals implements OrderTotals {
        @Override
        @Fenced(resource = "orders")
        public void recompute() {
        }
    }

    public static class Orders {
        @Fenced(resource = "orders", key = "#id")
        public void update(long id) {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class MixedConfig {
        @Bean
        OrderTotals orderTotals() {
            return new JdbcOrderTotals();
        }

        @Bean
        Orders orders() {
            return new Orders();
        }
    }

    /** Keyed and unkeyed checks of one resource fail startup (they do not exclude each other); lazily too. */
    @Test
    void keyedAndUnkeyedChecksOfOneResourceFailStartupInALazyContext() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
                .withUserConfiguration(MixedConfig.class).withPropertyValues("fencing.store.type=in-memory")
                .run(context -> assertThat(context).as("eager").hasFailed());
        lazy.withUserConfiguration(MixedConfig.class).run(context -> assertThat(context).as("lazy").hasFailed());
    }
}

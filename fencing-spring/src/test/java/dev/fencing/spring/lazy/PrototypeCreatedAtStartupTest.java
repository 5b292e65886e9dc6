package dev.fencing.spring.lazy;

import dev.fencing.FencingConfigurationException;
import dev.fencing.spring.EnableFencing;
import dev.fencing.spring.elsewhere.Accounts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Scope;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A prototype declared by an interface whose implementation lies outside the packages startup reads, and injected
 * into a singleton while the context starts: created before the check of beans created later was on, and known at
 * startup by its interface only.
 */
@Timeout(30)
class PrototypeCreatedAtStartupTest {

    static class Teller {
        final Accounts accounts;

        Teller(Accounts accounts) {
            this.accounts = accounts;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableFencing(allowInMemoryStore = true)
    static class MisspeltConfig {
        @Bean
        @Scope("prototype")
        Accounts accounts() {
            return new Accounts.Misspelt();
        }

        @Bean
        Teller teller(Accounts accounts) {
            return new Teller(accounts);
        }
    }

    @Test
    void aProblemOfAPrototypeMadeAtStartupFailsStartup() {
        assertThatThrownBy(() -> {
            try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                    MisspeltConfig.class)) {
                throw new AssertionError("started");
            }
        }).isInstanceOf(FencingConfigurationException.class).hasMessageContaining("#acountId");
    }
}

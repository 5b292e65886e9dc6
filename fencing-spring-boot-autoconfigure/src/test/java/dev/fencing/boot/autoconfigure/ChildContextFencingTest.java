package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A context hierarchy (SpringApplicationBuilder.child, a servlet context under a root one): fencing enabled in the
 * parent never reaches the child's beans (its auto-proxy creator and advisors are the parent's), so the child must
 * fence its own {@code @Fenced} beans, or fail to start.
 */
@Timeout(60)
class ChildContextFencingTest {

    public static class Ledger {
        @Fenced(resource = "ledger")
        public String post() {
            return "posted";
        }
    }

    public static class AcquiringLedger {
        @Fenced(resource = "ledger", acquire = true)
        public String post() {
            return FencingContext.current("ledger") != null ? "posted" : "no lock";
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(FencingAutoConfiguration.class)
    static class ParentApplication {
    }

    /** A child context without the starter: the parent's fencing must not pass for its own. */
    @Configuration(proxyBeanMethods = false)
    static class ChildWithoutFencing {
        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    private final ApplicationContextRunner starter = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
            .withPropertyValues("fencing.store.type=in-memory");

    /** The starter in both contexts: its @EnableFencing backed off in the child, whose ledger then ran unchecked. */
    @Test
    void theStarterInAChildContextFencesTheChildsBeans() {
        starter.run(parent -> {
            assertThat(parent).hasNotFailed();
            starter.withParent(parent).withBean(Ledger.class).run(child -> {
                assertThat(child).hasNotFailed();
                Ledger ledger = child.getBean(Ledger.class);
                assertThatThrownBy(ledger::post).as("no token bound").isInstanceOf(MissingTokenException.class);
                assertThat(FencingContext.call(new FencingToken("ledger", 1, "a"), ledger::post)).isEqualTo("posted");
            });
        });
    }

    /**
     * {@code fencing.issuer.type} set for the whole hierarchy (a child shares its parent's environment): the parent's
     * issuer serves the child, whose startup failed saying no TokenIssuer (nor DataSource) exists.
     */
    @Test
    void aChildContextUsesTheParentsIssuer() {
        ApplicationContextRunner jdbc = new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
                        DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
                        TransactionAutoConfiguration.class, FencingAutoConfiguration.class,
                        FencingJdbcAutoConfiguration.class))
                .withPropertyValues(FencingAutoConfigurationTest.h2("childissuer"), "fencing.issuer.type=jdbc");
        jdbc.run(parent -> {
            assertThat(parent).hasNotFailed().hasSingleBean(TokenIssuer.class);
            jdbc.withParent(parent).withBean(AcquiringLedger.class).run(child -> {
                assertThat(child).hasNotFailed();
                assertThat(child.getBean(AcquiringLedger.class).post()).isEqualTo("posted");
            });
        });
    }

    /** The child of a fenced parent without fencing of its own failed no check: the parent's support passed for it. */
    @Test
    void aChildContextWithoutFencingFailsToStart() {
        try (ConfigurableApplicationContext parent = new SpringApplicationBuilder(ParentApplication.class)
                .web(WebApplicationType.NONE).properties("fencing.store.type=in-memory").run()) {
            SpringApplicationBuilder child = new SpringApplicationBuilder(ChildWithoutFencing.class).parent(parent)
                    .web(WebApplicationType.NONE);
            assertThatThrownBy(() -> {
                try (ConfigurableApplicationContext context = child.run()) {
                    context.getBean(Ledger.class).post();
                }
            }).isInstanceOf(FencingConfigurationException.class).hasMessageContaining("Ledger.post(..)")
                    .hasMessageContaining("did not run in this context");
        }
    }
}

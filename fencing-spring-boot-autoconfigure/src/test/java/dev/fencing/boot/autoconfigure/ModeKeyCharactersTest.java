package dev.fencing.boot.autoconfigure;

import dev.fencing.annotation.Fenced;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Boot keeps only letters, digits, '-' and '_' of a map key written without brackets: {@code fencing.modes.order
 * lines=observe} binds the mode of 'orderlines', {@code fencing.modes.café} of 'caf'. Startup failed saying no
 * {@code @Fenced} method declares 'orderlines', as if it were misspelt, and its hint named brackets only for ':'. It
 * now names the declared resource the key was written for and the bracketed key to write.
 */
@Timeout(60)
class ModeKeyCharactersTest {

    /** A resource with a space and one with a letter beyond ASCII. */
    public static class Lines {
        @Fenced(resource = "order lines")
        public void write() {
        }

        @Fenced(resource = "caf\u00e9")
        public void serve() {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LinesConfig {
        @Bean
        Lines lines() {
            return new Lines();
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
            .withUserConfiguration(LinesConfig.class).withPropertyValues("fencing.store.type=in-memory");

    @Test
    void aModeKeyWhoseCharactersBootDroppedNamesTheBracketedKey() {
        runner.withPropertyValues("fencing.modes.order lines=observe", "fencing.modes.caf\u00e9=observe")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .hasStackTraceContaining("fencing.modes.[order lines]")
                            .hasStackTraceContaining("fencing.modes.[caf\u00e9]");
                });
    }

    @Test
    void theBracketedKeysStart() {
        runner.withPropertyValues("fencing.modes.[order lines]=observe", "fencing.modes.[caf\u00e9]=observe")
                .run(context -> assertThat(context).hasNotFailed());
    }
}

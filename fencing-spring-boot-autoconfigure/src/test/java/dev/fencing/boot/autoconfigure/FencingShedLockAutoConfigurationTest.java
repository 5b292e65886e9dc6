package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.shedlock.EnableSchedulerLockFencing;
import dev.fencing.shedlock.FencingLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With fencing-shedlock on the class path, a ShedLock provider left unfenced ({@code @EnableSchedulerLockFencing}
 * forgotten) stops startup naming the bean and the annotation: a new user's trial started cleanly, and every run then
 * failed with a missing-token message that named neither ShedLock nor the annotation.
 */
@Timeout(60)
class FencingShedLockAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingShedLockAutoConfiguration.class))
            .withUserConfiguration(ShedLock.class);

    @Configuration(proxyBeanMethods = false)
    static class ShedLock {
        @Bean
        LockProvider lockProvider() {
            return configuration -> Optional.empty();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLockFencing
    static class Fenced {
    }

    @Test
    void anUnfencedLockProviderStopsStartupNamingItAndTheAnnotation() {
        runner.run(context -> {
            assertThat(context).hasFailed();
            Throwable failure = context.getStartupFailure();
            while (!(failure instanceof FencingConfigurationException) && failure.getCause() != null) {
                failure = failure.getCause();
            }
            assertThat(failure).isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("[lockProvider]").hasMessageContaining("@EnableSchedulerLockFencing");
        });
    }

    @Test
    void aFencedOneStartsAndWithoutFencingShedLockNothingIsChecked() {
        runner.withUserConfiguration(Fenced.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(LockProvider.class)).isInstanceOf(FencingLockProvider.class);
        });
        runner.withClassLoader(new FilteredClassLoader(FencingLockProvider.class))
                .run(context -> assertThat(context).hasNotFailed());
        runner.withPropertyValues("fencing.enabled=false").run(context -> assertThat(context).hasNotFailed());
    }
}

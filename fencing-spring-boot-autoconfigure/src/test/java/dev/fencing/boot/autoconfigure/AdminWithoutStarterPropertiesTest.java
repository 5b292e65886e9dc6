package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.FencingConfigurationException;
import dev.fencing.boot.actuate.FencingAdminWebExtension;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The admin web extension's Spring Security requirement (bf5ad980) reads fencing.admin.enabled from the
 * FencingProperties bean and returns at once when there is none, while the extension itself is conditioned on the
 * raw property. An application that enables fencing itself (@EnableFencing) and excludes FencingAutoConfiguration
 * (which binds FencingProperties) got the reset served to every caller, without Spring Security and without
 * fencing.admin.allow-unsecured (a re-trial). The requirement now reads the raw property then.
 */
@Timeout(60)
class AdminWithoutStarterPropertiesTest {

    @Configuration(proxyBeanMethods = false)
    @EnableFencing
    static class OwnFencing {
        @Bean
        FenceStore fenceStore() {
            return new InMemoryFenceStore();
        }
    }

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingActuatorAutoConfiguration.class))
            .withUserConfiguration(OwnFencing.class)
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withPropertyValues("management.endpoints.web.exposure.include=fencing", "fencing.admin.enabled=true");

    @Test
    void theAdminOperationsStillNeedSpringSecurityOrTheAllowance() {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Spring Security is not on the class path");
        });
        runner.withPropertyValues("fencing.admin.allow-unsecured=true").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(FencingAdminWebExtension.class);
            FenceStore store = context.getBean(FenceStore.class);
            store.fence("accounts:1", new FencingToken("accounts:1", 50, "holder"), () -> null);
            assertThat(context.getBean(FencingAdminWebExtension.class)
                    .resetFloor("accounts:1", "1", "true", "true", null, null, null, null).getStatus()).isEqualTo(200);
        });
    }
}

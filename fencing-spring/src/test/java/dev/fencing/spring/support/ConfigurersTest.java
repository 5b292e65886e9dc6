package dev.fencing.spring.support;

import dev.fencing.mode.FenceMode;
import dev.fencing.spring.FencingConfigurer;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.annotation.Order;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Several configurers are read as one, in their order: before, a lookup of the unique one found none with two, and
 * every setting of both was silently dropped.
 */
class ConfigurersTest {

    @Order(1)
    static class First implements FencingConfigurer {
        @Override
        public FenceMode defaultFenceMode() {
            return FenceMode.OBSERVE;
        }

        @Override
        public Map<String, FenceMode> fenceModes() {
            return Map.of("ledger", FenceMode.ENFORCE);
        }
    }

    @Order(2)
    static class Second implements FencingConfigurer {
        @Override
        public Duration acquireTimeout() {
            return Duration.ofMillis(300);
        }

        @Override
        public FenceMode defaultFenceMode() {
            return FenceMode.ENFORCE;
        }

        @Override
        public Map<String, FenceMode> fenceModes() {
            return Map.of("ledger", FenceMode.OBSERVE, "audit", FenceMode.OBSERVE);
        }

        @Override
        public String missingStoreMessage() {
            return "add a store";
        }
    }

    /** Settings given outside the code, at the lowest precedence, still come before a configurer at the highest. */
    @Order(org.springframework.core.Ordered.HIGHEST_PRECEDENCE)
    static class Eager implements FencingConfigurer {
        @Override
        public Map<String, FenceMode> fenceModes() {
            return Map.of("ledger", FenceMode.OBSERVE);
        }
    }

    @Order(org.springframework.core.Ordered.LOWEST_PRECEDENCE)
    static class Explicit implements FencingConfigurer {
        @Override
        public Map<String, FenceMode> fenceModes() {
            return Map.of("ledger", FenceMode.ENFORCE);
        }

        @Override
        public boolean explicitSettings() {
            return true;
        }
    }

    @Test
    void explicitSettingsComeFirstWhateverTheOrder() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Eager.class,
                Explicit.class)) {
            assertThat(Configurers.of(context.getBeanProvider(FencingConfigurer.class)).fenceModes())
                    .containsEntry("ledger", FenceMode.ENFORCE);
        }
    }

    @Test
    void eachSettingIsTheFirstAnswerInOrderAndModesMerge() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Second.class,
                First.class)) {
            FencingConfigurer all = Configurers.of(context.getBeanProvider(FencingConfigurer.class));

            assertThat(all.defaultFenceMode()).as("the first's").isEqualTo(FenceMode.OBSERVE);
            assertThat(all.acquireTimeout()).as("only the second says").isEqualTo(Duration.ofMillis(300));
            assertThat(all.missingStoreMessage()).isEqualTo("add a store");
            assertThat(all.fenceModes()).containsExactlyInAnyOrderEntriesOf(
                    Map.of("ledger", FenceMode.ENFORCE, "audit", FenceMode.OBSERVE));
        }
        try (AnnotationConfigApplicationContext none = new AnnotationConfigApplicationContext()) {
            none.refresh();
            FencingConfigurer nothing = Configurers.of(none.getBeanProvider(FencingConfigurer.class));
            assertThat(nothing.acquireTimeout()).isNull();
            assertThat(nothing.fenceModes()).isEmpty();
        }
    }
}

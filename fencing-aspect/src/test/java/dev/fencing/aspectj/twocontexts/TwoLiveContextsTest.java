package dev.fencing.aspectj.twocontexts;

import dev.fencing.FencingConfigurationException;
import dev.fencing.aspectj.FencingAspect;
import dev.fencing.spring.EnableFencing;
import org.aspectj.lang.Aspects;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The woven aspect is one per class loader: a second ASPECTJ context started while a first one lives fails at startup
 * instead of taking over the first one's fenced calls (a new user's trial: its store, then, on closing, refusing them
 * all); once the first is closed, another one starts.
 */
class TwoLiveContextsTest {

    @Configuration
    @EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true)
    static class Config {
    }

    @Test
    void aSecondLiveAspectjContextFailsAndOneStartedAfterTheFirstClosedWorks() {
        FencingAspect aspect = Aspects.aspectOf(FencingAspect.class);
        try (AnnotationConfigApplicationContext first = new AnnotationConfigApplicationContext(Config.class)) {
            assertThat(aspect.isConfigured()).isTrue();
            assertThatThrownBy(() -> new AnnotationConfigApplicationContext(Config.class).close())
                    .hasRootCauseInstanceOf(FencingConfigurationException.class)
                    .rootCause().hasMessageContaining("already bound to another application context")
                    .hasMessageContaining("@DirtiesContext");
            assertThat(aspect.isConfigured()).as("the first context keeps it").isTrue();
        }
        assertThat(aspect.isConfigured()).as("detached when the first context closed").isFalse();
        try (AnnotationConfigApplicationContext next = new AnnotationConfigApplicationContext(Config.class)) {
            assertThat(aspect.isConfigured()).isTrue();
        }
    }
}

package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.mockito.Mockito;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A test's Mockito mock of an acquiring bean (a {@code @MockitoBean} of the service in a web slice) runs none of its
 * fenced code, so the startup checks leave it out: no issuer is needed for it. A spy runs the real code: checked.
 */
class MockedBeansStartupTest {

    @Configuration
    @EnableFencing
    static class MockedBookkeeper {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        Fixtures.Bookkeeper bookkeeper() {
            return Mockito.mock(Fixtures.Bookkeeper.class);
        }
    }

    @Configuration
    @EnableFencing
    static class SpiedBookkeeper {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        Fixtures.Bookkeeper bookkeeper() {
            return Mockito.spy(new Fixtures.Bookkeeper(new Fixtures.Ledger()));
        }
    }

    @Test
    void aMockOfAnAcquiringBeanNeedsNoIssuerButASpyDoes() {
        try (AnnotationConfigApplicationContext context =
                new AnnotationConfigApplicationContext(MockedBookkeeper.class)) {
            context.getBean(Fixtures.Bookkeeper.class);
        }
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(SpiedBookkeeper.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("acquire = true").hasMessageContaining("TokenIssuer");
    }
}

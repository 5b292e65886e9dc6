package dev.fencing.amqp.internal;

import dev.fencing.FencingConfigurationException;
import dev.fencing.amqp.FencingTokenListenerAdvice;
import dev.fencing.annotation.Fenced;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * fencing-amqp's startup check under {@code @EnableFencing} without Spring Boot, on a listener container bean (never
 * started, so no broker is needed): without {@link FencingTokenListenerAdvice} it fails startup naming the container
 * and the advice to add; with the advice, or without any container, the context starts.
 */
@Timeout(60)
class ListenerAdviceStartupCheckTest {

    public static class Ledger {
        @Fenced(resource = "ledger")
        public void append() {
        }
    }

    @Configuration
    @EnableFencing(proxyTargetClass = true)
    static class NoRabbit {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    @Configuration
    static class ContainerWithoutAdvice extends NoRabbit {
        @Bean
        CachingConnectionFactory connectionFactory() {
            return new CachingConnectionFactory("127.0.0.1", 5672);
        }

        @Bean
        SimpleMessageListenerContainer ledgerContainer(CachingConnectionFactory connectionFactory) {
            SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(connectionFactory);
            container.setQueueNames("ledger-entries");
            container.setAutoStartup(false);
            container.setMessageListener(message -> { });
            return container;
        }
    }

    @Configuration
    static class ContainerTrustingNone extends ContainerWithoutAdvice {
        @Override
        @Bean
        SimpleMessageListenerContainer ledgerContainer(CachingConnectionFactory connectionFactory) {
            SimpleMessageListenerContainer container = super.ledgerContainer(connectionFactory);
            container.setAdviceChain(FencingTokenListenerAdvice.trustingNone());
            return container;
        }
    }

    @Test
    void aContainerWithoutTheAdviceFailsStartupNamingItAndTheFix() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(ContainerWithoutAdvice.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Listener containers [ledgerContainer (queues ledger-entries)] have no "
                        + "FencingTokenListenerAdvice")
                .hasMessageContaining("FencingTokenListenerAdvice.trustingNone()");
    }

    @Test
    void aContainerTrustingNoneStarts() {
        try (AnnotationConfigApplicationContext context =
                     new AnnotationConfigApplicationContext(ContainerTrustingNone.class)) {
            assertThat(context.getBean(SimpleMessageListenerContainer.class).isRunning()).isFalse();
        }
    }

    @Test
    void aContextWithoutContainersStarts() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(NoRabbit.class)) {
            assertThat(context.getBean(Ledger.class)).isNotNull();
        }
    }
}

package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.amqp.FencingTokenListenerAdvice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.annotation.EnableRabbit;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A {@code @RabbitListener} container without {@link FencingTokenListenerAdvice} ignores the header of its messages,
 * so an acquiring method it reaches would set the sender's token aside unseen: startup warns, naming the container.
 * Nothing is said of a container that has the advice. The containers do not start (no broker is needed).
 */
@Timeout(60)
@ExtendWith(OutputCaptureExtension.class)
class FencingAmqpAutoConfigurationTest {

    private static final String WARNING = "have no FencingTokenListenerAdvice";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAmqpAutoConfiguration.class))
            .withUserConfiguration(Listeners.class);

    @EnableRabbit
    @Configuration(proxyBeanMethods = false)
    static class Listeners {
        @Bean
        CachingConnectionFactory rabbitConnectionFactory() {
            return new CachingConnectionFactory("127.0.0.1");
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    static class Ledger {
        @RabbitListener(id = "ledger-deposits", queues = "fencing-amqp-check-unused")
        void deposit(String body) {
        }
    }

    private static SimpleRabbitListenerContainerFactory factory(CachingConnectionFactory connections,
                                                                boolean advised) {
        SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
        factory.setConnectionFactory(connections);
        factory.setAutoStartup(false);
        if (advised) {
            factory.setAdviceChain(new FencingTokenListenerAdvice());
        }
        return factory;
    }

    @Test
    void aContainerWithoutTheAdviceIsNamedInAWarning(CapturedOutput output) {
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        () -> factory(new CachingConnectionFactory("127.0.0.1"), false))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("@RabbitListener containers [ledger-deposits] " + WARNING);
    }

    @Test
    void aContainerWithTheAdviceIsNotNamed(CapturedOutput output) {
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        () -> factory(new CachingConnectionFactory("127.0.0.1"), true))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).doesNotContain(WARNING);
    }
}

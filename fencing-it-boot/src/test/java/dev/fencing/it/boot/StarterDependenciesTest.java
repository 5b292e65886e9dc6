package dev.fencing.it.boot;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the starter brings an application that depends on it alone (this module declares neither fencing-amqp nor
 * Spring AMQP): fencing-amqp, so that an application on RabbitMQ gets listener containers that refuse the header
 * they would otherwise ignore, without Spring AMQP itself, so that one without RabbitMQ gets no broker client.
 */
@Timeout(30)
class StarterDependenciesTest {

    private final ClassLoader loader = StarterDependenciesTest.class.getClassLoader();

    @Test
    void theStarterBringsFencingAmqpButNotSpringRabbit() {
        assertThat(ClassUtils.isPresent("dev.fencing.amqp.FencingTokenListenerAdvice", loader))
                .as("fencing-amqp, from the starter").isTrue();
        assertThat(ClassUtils.isPresent("org.springframework.amqp.rabbit.core.RabbitTemplate", loader))
                .as("spring-rabbit, optional in fencing-amqp").isFalse();
        assertThat(ClassUtils.isPresent("dev.fencing.boot.autoconfigure.FencingAmqpAutoConfiguration", loader))
                .isTrue();
    }
}

package dev.fencing.docs.amqp;

import dev.fencing.amqp.FencingTokenListenerAdvice;
import dev.fencing.amqp.FencingTokenMessagePostProcessor;
import org.springframework.amqp.rabbit.annotation.EnableRabbit;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** docs/propagation.md: tokens over RabbitMQ, both sides. Started by AmqpFencingConfigTest. */
// tag::amqp[]
@Configuration
@EnableRabbit
public class AmqpFencingConfig {

    @Bean                                                          // producer: every send carries the bound tokens
    RabbitTemplate rabbitTemplate(ConnectionFactory connectionFactory) {
        RabbitTemplate template = new RabbitTemplate(connectionFactory);
        template.setBeforePublishPostProcessors(new FencingTokenMessagePostProcessor());
        return template;
    }

    @Bean                                                          // consumer: @RabbitListener methods run under them
    SimpleRabbitListenerContainerFactory rabbitListenerContainerFactory(ConnectionFactory connectionFactory) {
        SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
        factory.setConnectionFactory(connectionFactory);
        factory.setAdviceChain(new FencingTokenListenerAdvice());
        factory.setDefaultRequeueRejected(false);                  // a failing message is dead-lettered, not looped
        return factory;
    }
}
// end::amqp[]

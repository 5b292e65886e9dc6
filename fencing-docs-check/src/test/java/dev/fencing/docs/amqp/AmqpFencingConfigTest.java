package dev.fencing.docs.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.amqp.FencingTokenListenerAdvice;
import dev.fencing.amqp.FencingTokenMessagePostProcessor;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/** The documented beans, without a broker: the template's post-processor and the factory's advice are in place. */
class AmqpFencingConfigTest {

    @Test
    void theDocumentedBeansSendTheHeaderAndAdviseTheContainers() {
        try (var context = new AnnotationConfigApplicationContext()) {
            CachingConnectionFactory connectionFactory = new CachingConnectionFactory("127.0.0.1", 1);
            context.registerBean(ConnectionFactory.class, () -> connectionFactory);
            context.register(AmqpFencingConfig.class);
            context.refresh();

            RabbitTemplate template = context.getBean(RabbitTemplate.class);
            assertThat(template.getBeforePublishPostProcessors()).singleElement()
                    .isInstanceOf(FencingTokenMessagePostProcessor.class);
            Message message = new Message(new byte[0], new MessageProperties());
            try (FencingScope scope = FencingContext.bind(new FencingToken("accounts:42", 34, "client-7"))) {
                template.getBeforePublishPostProcessors().iterator().next().postProcessMessage(message);
            }
            assertThat(message.getMessageProperties().<String>getHeader("Fencing-Token"))
                    .isEqualTo("accounts:42#34@client-7");

            SimpleRabbitListenerContainerFactory factory = context.getBean(SimpleRabbitListenerContainerFactory.class);
            assertThat(factory.getAdviceChain()).singleElement().isInstanceOf(FencingTokenListenerAdvice.class);
            assertThat(factory).extracting("defaultRequeueRejected").isEqualTo(false);
            connectionFactory.destroy();
        }
    }
}

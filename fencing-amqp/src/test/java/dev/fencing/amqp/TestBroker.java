package dev.fencing.amqp;

import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.env.MapPropertySource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The shared RabbitMQ on 127.0.0.1:5672 (guest/guest) for one test class: queues named uniquely per run, each with a
 * dead-letter queue (through a dead-letter exchange of this run) where rejected messages land, all deleted by
 * {@link #close()}.
 */
final class TestBroker implements AutoCloseable {

    final String prefix = "fencing-amqp-test-" + UUID.randomUUID().toString().substring(0, 8);
    final CachingConnectionFactory connectionFactory = new CachingConnectionFactory("127.0.0.1", 5672);
    final RabbitAdmin admin;
    private final DirectExchange deadLetters = new DirectExchange(prefix + ".dlx", false, true);
    private final List<String> queues = new ArrayList<>();

    TestBroker() {
        connectionFactory.setUsername("guest");
        connectionFactory.setPassword("guest");
        admin = new RabbitAdmin(connectionFactory);
        admin.declareExchange(deadLetters);
    }

    /** Declares queue {@code prefix.name} and its dead-letter queue {@code prefix.name.dlq}; returns the name. */
    String queue(String name) {
        String queue = prefix + "." + name;
        Queue dlq = new Queue(queue + ".dlq", false, false, false);
        admin.declareQueue(dlq);
        admin.declareBinding(BindingBuilder.bind(dlq).to(deadLetters).with(queue));
        admin.declareQueue(QueueBuilder.nonDurable(queue).deadLetterExchange(deadLetters.getName())
                .deadLetterRoutingKey(queue).build());
        queues.add(dlq.getName());
        queues.add(queue);
        return queue;
    }

    /** A template without post-processors, to send raw headers and to read queues. */
    RabbitTemplate rawTemplate() {
        return new RabbitTemplate(connectionFactory);
    }

    /** A template that sends the tokens bound on the sending thread ({@link FencingTokenMessagePostProcessor}). */
    RabbitTemplate fencedTemplate() {
        RabbitTemplate template = rawTemplate();
        template.setBeforePublishPostProcessors(new FencingTokenMessagePostProcessor());
        return template;
    }

    /**
     * A started consumer application of {@code configuration}, its listeners' queue names given as the properties
     * {@code queues} (a property name to a queue this broker declared).
     */
    static AnnotationConfigApplicationContext consumer(Class<?> configuration, Map<String, Object> queues) {
        AnnotationConfigApplicationContext consumer = new AnnotationConfigApplicationContext();
        consumer.getEnvironment().getPropertySources().addFirst(new MapPropertySource("queues", queues));
        consumer.register(configuration);
        consumer.refresh();
        return consumer;
    }

    /** Sends {@code body} to {@code queue} through the default exchange with {@code headers} set by hand. */
    void sendRaw(String queue, String body, Map<String, Object> headers) {
        rawTemplate().convertAndSend("", queue, body, message -> {
            headers.forEach(message.getMessageProperties()::setHeader);
            return message;
        });
    }

    /** The next message dead-lettered from {@code queue}, waiting up to 10 s; {@code null} when none came. */
    Message deadLettered(String queue) {
        return rawTemplate().receive(queue + ".dlq", 10_000);
    }

    /** How many messages wait in {@code queue}. */
    long depth(String queue) {
        return admin.getQueueInfo(queue).getMessageCount();
    }

    @Override
    public void close() {
        for (String queue : queues) {
            admin.deleteQueue(queue);
        }
        admin.deleteExchange(deadLetters.getName());
        connectionFactory.destroy();
    }
}

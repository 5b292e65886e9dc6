package dev.fencing.amqp;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.AsyncRabbitTemplate;
import org.springframework.amqp.rabbit.RabbitMessageFuture;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.adapter.MessageListenerAdapter;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Request and reply on the real RabbitMQ: {@code RabbitTemplate.sendAndReceive} and {@code AsyncRabbitTemplate} (over
 * direct reply-to) send the caller's tokens with the request, from the calling thread; the listener's reply, sent
 * while the request's tokens are bound, carries none back, so the requester never receives a token it did not send.
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AmqpRequestReplyTest {

    private static final FencingToken TOKEN = new FencingToken("accounts:1", 5, "producer-a");

    private TestBroker broker;
    private SimpleMessageListenerContainer server;
    private String queue;

    /** Answers each request with the tokens it saw bound. */
    public static class Echo {
        public String handle(String body) {
            return body + " under " + FencingContext.snapshot().values();
        }
    }

    @BeforeAll
    void start() {
        broker = new TestBroker();
        queue = broker.queue("rpc");
        server = new SimpleMessageListenerContainer(broker.connectionFactory);
        server.setQueueNames(queue);
        server.setAdviceChain(new FencingTokenListenerAdvice());
        server.setMessageListener(new MessageListenerAdapter(new Echo(), "handle"));
        server.start();
    }

    @AfterAll
    void stop() {
        server.stop();
        broker.close();
    }

    private static Message request(String body) {
        MessageProperties properties = new MessageProperties();
        properties.setContentType(MessageProperties.CONTENT_TYPE_TEXT_PLAIN);
        return new Message(body.getBytes(StandardCharsets.UTF_8), properties);
    }

    private static String body(Message message) {
        return new String(message.getBody(), StandardCharsets.UTF_8);
    }

    @Test
    void sendAndReceiveCarriesTheTokenThereAndNoneBack() {
        RabbitTemplate client = broker.fencedTemplate();
        client.setReplyTimeout(10_000);
        Message reply;
        try (FencingScope ignored = FencingContext.bind(TOKEN)) {
            reply = client.sendAndReceive("", queue, request("request"));
        }
        assertThat(reply).isNotNull();
        assertThat(body(reply)).isEqualTo("request under [" + TOKEN + "]");
        assertThat(reply.getMessageProperties().getHeaders())
                .doesNotContainKey(FencingTokenMessagePostProcessor.HEADER);
    }

    @Test
    void asyncRabbitTemplateSendsFromTheCallingThread() throws Exception {
        AsyncRabbitTemplate client = new AsyncRabbitTemplate(broker.fencedTemplate());
        client.start();
        try {
            RabbitMessageFuture future;
            try (FencingScope ignored = FencingContext.bind(TOKEN)) {
                future = client.sendAndReceive("", queue, request("async"));
            }
            Message reply = future.get(10, TimeUnit.SECONDS);
            assertThat(body(reply)).isEqualTo("async under [" + TOKEN + "]");
            assertThat(reply.getMessageProperties().getHeaders())
                    .doesNotContainKey(FencingTokenMessagePostProcessor.HEADER);
        } finally {
            client.stop();
        }
    }
}

package dev.fencing.amqp;

import dev.fencing.context.FencingContext;
import org.aopalliance.aop.Advice;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.rabbit.config.RetryInterceptorBuilder;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.rabbit.retry.RejectAndDontRequeueRecoverer;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On the real RabbitMQ, a listener that fails every call under Spring AMQP's stateless retry (three attempts, then
 * rejected, as Boot's listener retry does). With
 * the advice first in the chain, every attempt runs under the message's tokens, and a message the advice rejects never
 * reaches the listener. Behind the retry, the retried attempts skip the advice (Spring AMQP calls {@code proceed()}
 * again on the invocation the first attempt used): no token is bound on them, and a rejected message reaches its
 * listener. That is why startup refuses the advice behind a stateless retry ({@code ListenerAdviceStartupCheckTest},
 * the starter's check).
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AmqpRetryOrderTest {

    private static final String TOKEN = "accounts:1#5@producer-a";

    private TestBroker broker;

    @BeforeAll
    void broker() {
        broker = new TestBroker();
    }

    @AfterAll
    void close() {
        broker.close();
    }

    /** What each listener call of a message sent with {@link #TOKEN} saw bound, in order (2 s after the last). */
    private List<String> attempts(String name, Advice... chain) throws InterruptedException {
        String queue = broker.queue(name);
        BlockingQueue<String> seen = new LinkedBlockingQueue<>();
        SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(broker.connectionFactory);
        container.setQueueNames(queue);
        container.setDefaultRequeueRejected(false);
        container.setAdviceChain(chain);
        container.setMessageListener((MessageListener) message -> {
            seen.add(FencingContext.snapshot().values().toString());
            throw new IllegalStateException("the listener fails every call");
        });
        container.start();
        try {
            broker.sendRaw(queue, "write", Map.of(FencingTokenMessagePostProcessor.HEADER, TOKEN));
            Message dead = broker.deadLettered(queue);
            assertThat(dead).as("rejected once the attempts were spent").isNotNull();
            assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("write");
            TimeUnit.MILLISECONDS.sleep(200);
            return List.copyOf(seen);
        } finally {
            container.stop();
        }
    }

    private static Advice retry() {
        return RetryInterceptorBuilder.stateless().maxRetries(2).backOffOptions(10, 1.0, 10)
                .recoverer(new RejectAndDontRequeueRecoverer()).build();
    }

    @Test
    void withTheAdviceFirstEveryAttemptRunsUnderTheMessagesTokens() throws Exception {
        assertThat(attempts("first", new FencingTokenListenerAdvice(), retry()))
                .containsExactly("[" + TOKEN + "]", "[" + TOKEN + "]", "[" + TOKEN + "]");
    }

    @Test
    void withTheRefusalFirstARejectedMessageNeverReachesTheListener() throws Exception {
        assertThat(attempts("refused-first", FencingTokenListenerAdvice.trustingNone(), retry())).isEmpty();
    }

    @Test
    void behindTheRetryTheRetriedAttemptsSkipTheAdvice() throws Exception {
        assertThat(attempts("behind", retry(), new FencingTokenListenerAdvice()))
                .containsExactly("[" + TOKEN + "]", "[]", "[]");
        assertThat(attempts("refused-behind", retry(), FencingTokenListenerAdvice.trustingNone()))
                .as("the first attempt is rejected by the advice, the retries run the listener, header unread")
                .containsExactly("[]", "[]");
    }
}

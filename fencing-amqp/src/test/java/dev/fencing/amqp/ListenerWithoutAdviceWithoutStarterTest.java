package dev.fencing.amqp;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.EnableRabbit;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A Spring AMQP consumer with {@code @EnableFencing} and fencing-amqp, no Spring Boot, whose listener container
 * factory has no {@link FencingTokenListenerAdvice}: the container ignores the {@code Fencing-Token} header, and a
 * {@code @Fenced(acquire = true)} method the listener reaches takes a lock of its own and writes a paused sender's
 * (a zombie's) message. With the starter every container it reaches gets {@code trustingNone()} and one it cannot
 * reach fails startup ({@code ListenerAdviceCheck}). Closed either way: startup fails naming the advice, or the
 * message carrying the header is rejected (dead-lettered) before the write. Needs the RabbitMQ of 127.0.0.1:5672.
 */
@Timeout(60)
class ListenerWithoutAdviceWithoutStarterTest {

    /** The consumer's data, written under the lock the listener's acquiring method takes. */
    public static class Ledger {
        final List<String> entries = new CopyOnWriteArrayList<>();

        @Fenced(resource = "ledger", acquire = true)
        public void append(String entry) {
            entries.add(entry);
        }

        /** A method, since the bean is a class-based proxy whose own fields are empty. */
        public List<String> entries() {
            return entries;
        }
    }

    public static class Listener {
        private final Ledger ledger;

        Listener(Ledger ledger) {
            this.ledger = ledger;
        }

        @RabbitListener(id = "ledger", queues = "${fencing.test.queue}", autoStartup = "false")
        public void receive(Message message) {
            ledger.append(new String(message.getBody(), StandardCharsets.UTF_8));
        }
    }

    @Configuration
    @EnableRabbit
    @EnableFencing(proxyTargetClass = true)
    static class Consumer {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }

        @Bean
        Listener listener(Ledger ledger) {
            return new Listener(ledger);
        }

        /** The factory the listener uses (Spring AMQP's default name), without the advice. */
        @Bean
        SimpleRabbitListenerContainerFactory rabbitListenerContainerFactory() {
            SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
            factory.setConnectionFactory(broker.connectionFactory);
            factory.setDefaultRequeueRejected(false);
            return factory;
        }
    }

    /** The control: the factory with the advice that trusts no sender, as the starter adds it. */
    @Configuration
    static class ConsumerTrustingNone extends Consumer {
        @Override
        @Bean
        SimpleRabbitListenerContainerFactory rabbitListenerContainerFactory() {
            SimpleRabbitListenerContainerFactory factory = super.rabbitListenerContainerFactory();
            factory.setAdviceChain(FencingTokenListenerAdvice.trustingNone());
            return factory;
        }
    }

    private static TestBroker broker;
    private String queue;

    @BeforeEach
    void broker() {
        broker = new TestBroker();
        queue = broker.queue("no-advice");
    }

    @AfterEach
    void close() {
        broker.close();
    }

    @Test
    void aZombiesMessageThroughAContainerWithoutTheAdviceNeverReachesTheAcquiringWrite() throws Exception {
        zombieMessageTo(Consumer.class);
    }

    @Test
    void withTheAdviceTheZombiesMessageIsRejected() throws Exception {
        zombieMessageTo(ConsumerTrustingNone.class);
    }

    private void zombieMessageTo(Class<?> application) throws Exception {
        Throwable startup = catchThrowable(() -> TestBroker.consumer(application,
                Map.of("fencing.test.queue", queue)).close());
        if (startup != null) {
            assertThat(startup).isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("FencingTokenListenerAdvice");
            return;
        }
        try (AnnotationConfigApplicationContext consumer = TestBroker.consumer(application,
                Map.of("fencing.test.queue", queue))) {
            try (FencingScope ignored = FencingContext.bind(new FencingToken("ledger", 1, "paused-sender"))) {
                broker.fencedTemplate().convertAndSend("", queue, "zombie's entry");
            }
            consumer.getBean(RabbitListenerEndpointRegistry.class).getListenerContainer("ledger").start();
            Message dead = broker.deadLettered(queue);
            List<String> entries = consumer.getBean(Ledger.class).entries();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (dead == null && entries.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(entries).as("the ledger after the zombie's message").doesNotContain("zombie's entry");
            assertThat(dead).as("the zombie's message, rejected").isNotNull();
        }
    }
}

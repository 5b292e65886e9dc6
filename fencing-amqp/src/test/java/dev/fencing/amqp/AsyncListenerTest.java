package dev.fencing.amqp;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingPropagation;
import dev.fencing.context.FencingScope;
import dev.fencing.guard.UncheckedReceipts;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.testsupport.LogRecords;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.EnableRabbit;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @RabbitListener} that returns a {@code CompletableFuture} (Spring AMQP's asynchronous listener) and does its
 * fenced write on another thread, the token carried there by {@link FencingPropagation}. Spring AMQP acknowledges or
 * rejects its message when the future completes, outside the advice, by the container factory's
 * {@code defaultRequeueRejected}: with it false and {@link FencingTokenListenerAdvice#forAsyncListeners()}, a fence
 * refusal there is dead-lettered once, as for a synchronous listener (with the default, a red-team review counted 5,484
 * deliveries of it in 11 s), and an accepted message is not reported as unchecked because the listener returned
 * before its worker's check ran.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class AsyncListenerTest {

    public static class Accounts {
        final Map<String, String> data = new ConcurrentHashMap<>();

        @Fenced(resource = "accounts", key = "#account")
        public void write(String account, String value) {
            data.put(account, value);
        }

        public Map<String, String> data() {
            return Map.copyOf(data);
        }
    }

    public static class Listener {
        final Accounts accounts;
        final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        final ExecutorService pool = FencingPropagation.executorService(Executors.newFixedThreadPool(2));

        Listener(Accounts accounts) {
            this.accounts = accounts;
        }

        @RabbitListener(queues = "${fencing.test.queue}", containerFactory = "fencedFactory")
        public CompletableFuture<Void> onMessage(Message message) {
            String body = new String(message.getBody(), StandardCharsets.UTF_8);
            calls.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            String[] parts = body.split(":", 3);
            return CompletableFuture.runAsync(() -> accounts.write(parts[1], parts[2]), pool);
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
        Accounts accounts() {
            return new Accounts();
        }

        @Bean
        Listener listener(Accounts accounts) {
            return new Listener(accounts);
        }

        @Bean
        SimpleRabbitListenerContainerFactory fencedFactory() {
            SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
            factory.setConnectionFactory(broker.connectionFactory);
            factory.setAdviceChain(new FencingTokenListenerAdvice().forAsyncListeners());
            factory.setDefaultRequeueRejected(false);    // reaches the listener adapter that rejects the result
            factory.setPrefetchCount(1);
            return factory;
        }
    }

    private static TestBroker broker;
    private String queue;
    private AnnotationConfigApplicationContext consumer;
    private Listener listener;
    private RabbitTemplate producer;

    @BeforeAll
    void start() {
        broker = new TestBroker();
        queue = broker.queue("async");
        consumer = TestBroker.consumer(Consumer.class, Map.of("fencing.test.queue", queue));
        listener = consumer.getBean(Listener.class);
        producer = broker.fencedTemplate();
    }

    @AfterAll
    void stop() {
        if (consumer != null) {
            consumer.close();
        }
        if (broker != null) {
            broker.close();
        }
        listener.pool.shutdownNow();
    }

    @Test
    void aStaleTokenRefusedOnTheListenersWorkerThreadIsDeadLetteredOnceNotRequeued() throws Exception {
        try (LogRecords unchecked = LogRecords.of(UncheckedReceipts.class)) {
            try (FencingScope ignored = FencingContext.bind(new FencingToken("accounts:1", 8, "new-holder"))) {
                producer.convertAndSend("", queue, "write:1:new");
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!"new".equals(listener.accounts.data().get("1")) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(listener.accounts.data()).containsEntry("1", "new");
            Thread.sleep(200);
            assertThat(unchecked.records()).as("the accepted message, checked after its listener returned")
                    .isEmpty();
        }
        try (FencingScope ignored = FencingContext.bind(new FencingToken("accounts:1", 7, "zombie"))) {
            producer.convertAndSend("", queue, "write:1:zombie");
        }
        Message dead = broker.deadLettered(queue);
        Thread.sleep(1000);
        assertThat(listener.accounts.data()).containsEntry("1", "new");
        assertThat(listener.calls.get("write:1:zombie").get())
                .as("deliveries of the refused message (dead-lettered: %s)", dead != null).isEqualTo(1);
        assertThat(dead).as("the refused message was dead-lettered").isNotNull();
    }
}

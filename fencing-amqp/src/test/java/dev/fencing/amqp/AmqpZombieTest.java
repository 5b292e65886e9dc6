package dev.fencing.amqp;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.EnableRabbit;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The zombie, on the real RabbitMQ: producer A held the lock of {@code accounts:42} with token 5, paused;
 * producer B took it over with token 6 and sent its write; then A woke up and sent its own. Both messages wait in the
 * queue, B's first; the consumer then processes them in that order. Through a container factory with
 * {@link FencingTokenListenerAdvice} into a {@code @Fenced} repository (in-memory fence store), A's write is refused
 * as stale and dead-lettered, and the data holds B's; through one without the advice into the same repository without
 * {@code @Fenced}, A's stale write lands over B's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AmqpZombieTest {


    private static final FencingToken A = new FencingToken("accounts:42", 5, "producer-a");
    private static final FencingToken B = new FencingToken("accounts:42", 6, "producer-b");

    /** The account, written through the fence. */
    public static class FencedAccounts {
        final Map<String, String> data = new ConcurrentHashMap<>();

        @Fenced(resource = "accounts", key = "#account")
        public void write(String account, String value) {
            data.put(account, value);
        }

        /** The value of {@code account}; a method, since the bean is a class-based proxy whose own fields are empty. */
        public String read(String account) {
            return data.get(account);
        }
    }

    /** The same account without the fence. */
    public static class PlainAccounts {
        final Map<String, String> data = new ConcurrentHashMap<>();

        public void write(String account, String value) {
            data.put(account, value);
        }

        public String read(String account) {
            return data.get(account);
        }
    }

    /** Both listeners; each outcome ("ok B", "refused A") goes to the listener's own queue of outcomes. */
    public static class Listeners {
        final FencedAccounts fenced;
        final PlainAccounts plain;
        final BlockingQueue<String> fencedOutcomes = new LinkedBlockingQueue<>();
        final BlockingQueue<String> plainOutcomes = new LinkedBlockingQueue<>();
        final BlockingQueue<Throwable> failures = new LinkedBlockingQueue<>();

        Listeners(FencedAccounts fenced, PlainAccounts plain) {
            this.fenced = fenced;
            this.plain = plain;
        }

        @RabbitListener(id = "fenced", queues = "${fencing.test.fenced-queue}",
                containerFactory = "fencedFactory", autoStartup = "false")
        public void fenced(Message message) {
            String producer = new String(message.getBody(), StandardCharsets.UTF_8);
            try {
                fenced.write("42", "written by " + producer);
                fencedOutcomes.add("ok " + producer);
            } catch (RuntimeException e) {
                failures.add(e);
                fencedOutcomes.add("refused " + producer);
                throw e;
            }
        }

        @RabbitListener(id = "plain", queues = "${fencing.test.plain-queue}",
                containerFactory = "plainFactory", autoStartup = "false")
        public void plain(Message message) {
            String producer = new String(message.getBody(), StandardCharsets.UTF_8);
            plain.write("42", "written by " + producer);
            plainOutcomes.add("ok " + producer);
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
        FencedAccounts fencedAccounts() {
            return new FencedAccounts();
        }

        @Bean
        PlainAccounts plainAccounts() {
            return new PlainAccounts();
        }

        @Bean
        Listeners listeners(FencedAccounts fenced, PlainAccounts plain) {
            return new Listeners(fenced, plain);
        }

        @Bean
        SimpleRabbitListenerContainerFactory fencedFactory() {
            SimpleRabbitListenerContainerFactory factory = plainFactory();
            factory.setAdviceChain(new FencingTokenListenerAdvice());
            return factory;
        }

        @Bean
        SimpleRabbitListenerContainerFactory plainFactory() {
            SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
            factory.setConnectionFactory(broker.connectionFactory);
            factory.setPrefetchCount(1);
            factory.setConcurrentConsumers(1);
            return factory;
        }
    }

    private static TestBroker broker;
    private String fencedQueue;
    private String plainQueue;
    private AnnotationConfigApplicationContext consumer;
    private Listeners listeners;
    private RabbitTemplate producers;

    @BeforeAll
    void start() {
        broker = new TestBroker();
        fencedQueue = broker.queue("zombie-fenced");
        plainQueue = broker.queue("zombie-plain");
        consumer = TestBroker.consumer(Consumer.class,
                Map.of("fencing.test.fenced-queue", fencedQueue, "fencing.test.plain-queue", plainQueue));
        listeners = consumer.getBean(Listeners.class);
        producers = broker.fencedTemplate();
    }

    @AfterAll
    void stop() {
        if (consumer != null) {
            consumer.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    /** B sends under token 6, then the zombie A under token 5; then the listener starts and takes them in order. */
    private void newHolderThenZombieSend(String queue, String listenerId, BlockingQueue<String> outcomes,
                                         List<String> expected) throws Exception {
        try (FencingScope ignored = FencingContext.bind(B)) {
            producers.convertAndSend("", queue, "B");
        }
        try (FencingScope ignored = FencingContext.bind(A)) {
            producers.convertAndSend("", queue, "A");
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (broker.depth(queue) < 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(broker.depth(queue)).as("both messages wait in the queue").isEqualTo(2);
        consumer.getBean(RabbitListenerEndpointRegistry.class).getListenerContainer(listenerId).start();
        for (int i = 0; i < 2; i++) {
            assertThat(outcomes.poll(10, TimeUnit.SECONDS)).as("outcome %s", i + 1).isEqualTo(expected.get(i));
        }
    }

    @Test
    void withoutTheFenceTheZombiesStaleWriteLandsOverTheNewHolders() throws Exception {
        newHolderThenZombieSend(plainQueue, "plain", listeners.plainOutcomes, List.of("ok B", "ok A"));
        assertThat(listeners.plain.read("42")).isEqualTo("written by A");
        assertThat(broker.depth(plainQueue + ".dlq")).isZero();
    }

    @Test
    void withTheFenceTheZombiesWriteIsRefusedAtTheRepositoryAndDeadLettered() throws Exception {
        newHolderThenZombieSend(fencedQueue, "fenced", listeners.fencedOutcomes, List.of("ok B", "refused A"));
        assertThat(listeners.fenced.read("42")).isEqualTo("written by B");
        Throwable refusal = listeners.failures.poll(10, TimeUnit.SECONDS);
        assertThat(refusal).isInstanceOf(StaleTokenException.class);
        StaleTokenException stale = (StaleTokenException) refusal;
        assertThat(List.of(stale.presented().value(), stale.maxSeen())).containsExactly(5L, 6L);
        Message dead = broker.deadLettered(fencedQueue);
        assertThat(dead).as("A's message, rejected without requeue, in the dead-letter queue").isNotNull();
        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("A");
        assertThat(dead.getMessageProperties().<String>getHeader(FencingTokenMessagePostProcessor.HEADER))
                .isEqualTo(A.toText());
        assertThat(broker.depth(fencedQueue)).isZero();
    }
}

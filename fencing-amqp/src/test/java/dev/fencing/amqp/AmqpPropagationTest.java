package dev.fencing.amqp;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.signing.TokenSigner;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.EnableRabbit;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On the real RabbitMQ: a {@code RabbitTemplate} with {@link FencingTokenMessagePostProcessor} sends, a
 * {@code @RabbitListener} on a container factory with {@link FencingTokenListenerAdvice} consumes and writes through a
 * {@code @Fenced} repository (in-memory fence store). The queue dead-letters to a queue of its own, where every
 * message the advice rejects must land (once: the container requeues rejected messages by default, so a message
 * requeued instead would be redelivered, never dead-lettered).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AmqpPropagationTest {


    private static final TokenSigner SIGNER =
            TokenSigner.hmac("k1", "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8));

    /** The consumer's repository: each write checked by the fence. */
    public static class Accounts {
        final Map<String, String> data = new ConcurrentHashMap<>();

        @Fenced(resource = "accounts", key = "#account")
        public void write(String account, String value) {
            data.put(account, value);
        }

        /** What was written; a method, since the bean is a class-based proxy whose own fields are empty. */
        public Map<String, String> data() {
            return Map.copyOf(data);
        }
    }

    /** Records what each delivery saw bound; a body {@code write:<account>:<value>} writes through the repository. */
    public static class Listener {
        final Accounts accounts;
        final AtomicInteger calls = new AtomicInteger();
        final BlockingQueue<FencingSnapshot> seen = new LinkedBlockingQueue<>();
        final BlockingQueue<Throwable> failures = new LinkedBlockingQueue<>();

        Listener(Accounts accounts) {
            this.accounts = accounts;
        }

        @RabbitListener(queues = "${fencing.test.queue}", containerFactory = "fencedFactory")
        public void onMessage(Message message) {
            calls.incrementAndGet();
            seen.add(FencingContext.snapshot());
            String body = new String(message.getBody(), StandardCharsets.UTF_8);
            if (body.startsWith("write:")) {
                String[] parts = body.split(":", 3);
                try {
                    accounts.write(parts[1], parts[2]);
                } catch (RuntimeException e) {
                    failures.add(e);
                    throw e;
                }
            }
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
            factory.setAdviceChain(new FencingTokenListenerAdvice());
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
        queue = broker.queue("orders");
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
    }

    @BeforeEach
    void forgetEarlierDeliveries() {
        listener.seen.clear();
        listener.failures.clear();
    }

    private FencingSnapshot nextSeen() throws InterruptedException {
        FencingSnapshot snapshot = listener.seen.poll(10, TimeUnit.SECONDS);
        assertThat(snapshot).as("the listener ran within 10 s").isNotNull();
        return snapshot;
    }

    @Test
    void tokensOfSeveralResourcesCrossTheBrokerSignedOnesUnchanged() throws Exception {
        FencingToken accounts = SIGNER.sign(new FencingToken("accounts:1", 7, "producer-a"));
        FencingToken ledger = new FencingToken("ledger", 3, "producer-a");
        try (FencingScope ignored = FencingContext.bind(accounts, ledger)) {
            producer.convertAndSend("", queue, "record");
        }
        FencingSnapshot seen = nextSeen();
        assertThat(seen).containsOnlyKeys("accounts:1", "ledger");
        assertThat(seen.get("accounts:1")).isEqualTo(accounts);
        assertThat(seen.get("accounts:1").isSigned()).isTrue();
        assertThat(seen.get("ledger")).isEqualTo(ledger);
        assertThat(seen.isRemote("accounts:1")).as("bound as remote: checks only").isTrue();
    }

    @Test
    void aHeaderAtTheEntryLimitLongerThanSpringAmqpsStringLimitArrivesWhole() throws Exception {
        List<FencingToken> tokens = new ArrayList<>();
        for (int i = 0; i < TokenList.MAX_ENTRIES; i++) {
            tokens.add(new FencingToken("resource-" + i + "-" + "x".repeat(200), 100 + i,
                    "producer-" + "a".repeat(200)));
        }
        assertThat(TokenList.format(tokens).length()).isBetween(1025, TokenList.MAX_LENGTH);
        try (FencingScope ignored = FencingContext.bind(tokens)) {
            producer.convertAndSend("", queue, "record");
        }
        FencingSnapshot seen = nextSeen();
        assertThat(seen.values()).containsExactlyInAnyOrderElementsOf(tokens);
    }

    @Test
    void malformedHeadersAreDeadLetteredNotRequeuedAndTheListenerNeverRuns() {
        int callsBefore = listener.calls.get();
        StringBuilder tooMany = new StringBuilder();
        for (int i = 0; i <= TokenList.MAX_ENTRIES; i++) {
            tooMany.append(i == 0 ? "" : ",").append("r").append(i).append("#1@p");
        }
        broker.sendRaw(queue, "write:2:bad-entry", Map.of(FencingTokenMessagePostProcessor.HEADER, "accounts:2#x@p"));
        broker.sendRaw(queue, "write:2:too-many", Map.of(FencingTokenMessagePostProcessor.HEADER, tooMany.toString()));
        // an array with a void field arrives as a list holding null: it was a NullPointerException, which the
        // container requeued, redelivered at once, for ever
        broker.sendRaw(queue, "write:2:void-field",
                Map.of(FencingTokenMessagePostProcessor.HEADER, Arrays.asList("accounts:2#1@p", null)));
        List<String> deadLettered = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Message dead = broker.deadLettered(queue);
            assertThat(dead).as("dead-lettered message %s", i + 1).isNotNull();
            assertThat(dead.getMessageProperties().getXDeathHeader()).first()
                    .satisfies(death -> assertThat(death.get("reason")).isEqualTo("rejected"));
            deadLettered.add(new String(dead.getBody(), StandardCharsets.UTF_8));
        }
        assertThat(deadLettered)
                .containsExactlyInAnyOrder("write:2:bad-entry", "write:2:too-many", "write:2:void-field");
        assertThat(listener.calls).hasValue(callsBefore);
        assertThat(broker.depth(queue)).isZero();
        assertThat(listener.accounts.data()).doesNotContainKey("2");
    }

    @Test
    void aMessageWithoutTheHeaderIsRefusedAtTheRepositoryAsMissingAndDeadLettered() throws Exception {
        producer.convertAndSend("", queue, "write:3:no-token");
        assertThat(nextSeen()).isEmpty();
        assertThat(listener.failures.poll(10, TimeUnit.SECONDS)).isInstanceOf(MissingTokenException.class);
        Message dead = broker.deadLettered(queue);
        assertThat(dead).isNotNull();
        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("write:3:no-token");
        assertThat(listener.accounts.data()).doesNotContainKey("3");
    }

    @Test
    void aStaleTokenIsRefusedAtTheRepositoryAndDeadLetteredOnce() throws Exception {
        try (FencingScope ignored = FencingContext.bind(new FencingToken("accounts:4", 9, "producer-b"))) {
            producer.convertAndSend("", queue, "write:4:new");
        }
        try (FencingScope ignored = FencingContext.bind(new FencingToken("accounts:4", 8, "producer-a"))) {
            producer.convertAndSend("", queue, "write:4:stale");
        }
        Throwable failure = listener.failures.poll(10, TimeUnit.SECONDS);
        assertThat(failure).isInstanceOf(StaleTokenException.class);
        assertThat(((StaleTokenException) failure).presented().value()).isEqualTo(8);
        Message dead = broker.deadLettered(queue);
        assertThat(dead).isNotNull();
        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("write:4:stale");
        assertThat(dead.getMessageProperties().getXDeathHeader()).first()
                .satisfies(death -> assertThat(death.get("count")).isEqualTo(1L));
        assertThat(listener.accounts.data()).containsEntry("4", "new");
        assertThat(broker.depth(queue)).isZero();
        assertThat(listener.failures).isEmpty();
    }

    /**
     * The trust predicate the docs show reads the broker-validated {@code user_id} of a received message where Spring
     * AMQP puts it, {@code getReceivedUserId()}: {@code getUserId()} is empty on an inbound message, so a predicate on
     * it refused every message (a new user's trial dead-lettered them all).
     */
    @Test
    void theDocumentedTrustPredicateReadsTheBrokerValidatedUserIdOfAReceivedMessage() {
        String trustQueue = broker.queue("trust");
        RabbitTemplate sender = broker.rawTemplate();
        sender.setUserIdExpressionString("'guest'"); // the connection's user: RabbitMQ refuses any other
        sender.setBeforePublishPostProcessors(new FencingTokenMessagePostProcessor());
        try (FencingScope ignored = FencingContext.bind(new FencingToken("accounts:5", 1, "producer-a"))) {
            sender.convertAndSend("", trustQueue, "record");
        }
        Message received = broker.rawTemplate().receive(trustQueue, 10_000);
        assertThat(received).as("received within 10 s").isNotNull();
        assertThat(received.getMessageProperties().getUserId()).isNull();
        Predicate<Message> documented = message -> "guest".equals(message.getMessageProperties().getReceivedUserId());
        assertThat(documented.test(received)).isTrue();
        assertThat(received.getMessageProperties().getHeaders()).containsKey(FencingTokenMessagePostProcessor.HEADER);
    }
}

package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.annotation.Fenced;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.amqp.autoconfigure.SimpleRabbitListenerContainerFactoryConfigurer;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import dev.fencing.amqp.FencingTokenListenerAdvice;
import dev.fencing.rule.StaleTokenException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.aopalliance.aop.Advice;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The cross-process trial's zombie over RabbitMQ, on the real broker: a Spring Boot consumer whose
 * {@code @RabbitListener} runs on Boot's own container factory (no {@code FencingTokenListenerAdvice}) and calls a
 * {@code @Fenced(acquire = true)} method. A message carrying the {@code Fencing-Token} header (a zombie's stale token)
 * is rejected without requeue to the dead-letter queue and the method does not run; without the starter's refusal it
 * ran under a lock of its own and wrote. A message without the header still runs under the consumer's own lock.
 */
@Timeout(60)
class AmqpUntrustedTokenTest {

    private static final String QUEUE_PROPERTY = "test.deposits-queue";

    private final String queue = "fencing-boot-untrusted-" + UUID.randomUUID().toString().substring(0, 8);
    private final CachingConnectionFactory connections = new CachingConnectionFactory("127.0.0.1", 5672);
    private final RabbitAdmin admin = new RabbitAdmin(connections);
    private final DirectExchange deadLetters = new DirectExchange(queue + ".dlx", false, true);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RabbitAutoConfiguration.class, FencingAutoConfiguration.class,
                    FencingAmqpAutoConfiguration.class))
            .withUserConfiguration(Consumer.class)
            .withPropertyValues("spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672",
                    "fencing.store.type=in-memory", QUEUE_PROPERTY + "=" + queue);

    public static class Ledger {
        private final BlockingQueue<String> posted = new LinkedBlockingQueue<>();

        @Fenced(resource = "ledger", acquire = true)
        public void post(String body) {
            posted.add(body);
        }

        public String nextPosted() throws InterruptedException {
            return posted.poll(10, TimeUnit.SECONDS);
        }

        public String postedNow() {
            return posted.poll();
        }
    }

    public static class Deposits {
        private final Ledger ledger;

        Deposits(Ledger ledger) {
            this.ledger = ledger;
        }

        @RabbitListener(queues = "${" + QUEUE_PROPERTY + "}")
        public void deposit(String body) {
            ledger.post(body);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Consumer {
        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }

        @Bean
        Deposits deposits(Ledger ledger) {
            return new Deposits(ledger);
        }
    }

    /** A checking ledger: the repository a trusted container's listener writes through. */
    public static class CheckedLedger {
        private final AtomicInteger calls = new AtomicInteger();
        private final BlockingQueue<String> posted = new LinkedBlockingQueue<>();

        @Fenced(resource = "ledger")
        public void post(String body) {
            posted.add(body);
        }

        public String nextPosted() throws InterruptedException {
            return posted.poll(10, TimeUnit.SECONDS);
        }

        public int calls() {
            return calls.get();
        }

        public void called() {
            calls.incrementAndGet();
        }
    }

    public static class TrustedDeposits {
        private final CheckedLedger ledger;

        TrustedDeposits(CheckedLedger ledger) {
            this.ledger = ledger;
        }

        @RabbitListener(queues = "${" + QUEUE_PROPERTY + "}", containerFactory = "trustedFactory")
        public void deposit(String body) {
            ledger.called();
            ledger.post(body);
        }
    }

    /** The docs' way to keep Boot's settings (its retry included): Boot's configurer, then the advice ahead. */
    @Configuration(proxyBeanMethods = false)
    static class TrustedConsumer {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        SimpleRabbitListenerContainerFactory trustedFactory(SimpleRabbitListenerContainerFactoryConfigurer configurer,
                                                            ConnectionFactory connectionFactory) {
            SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
            configurer.configure(factory, connectionFactory);
            Advice[] boots = factory.getAdviceChain() == null ? new Advice[0] : factory.getAdviceChain();
            Advice[] chain = new Advice[boots.length + 1];
            chain[0] = new FencingTokenListenerAdvice();
            System.arraycopy(boots, 0, chain, 1, boots.length);
            factory.setAdviceChain(chain);
            return factory;
        }

        @Bean
        CheckedLedger checkedLedger() {
            return new CheckedLedger();
        }

        @Bean
        TrustedDeposits trustedDeposits(CheckedLedger ledger) {
            return new TrustedDeposits(ledger);
        }
    }

    AmqpUntrustedTokenTest() {
        connections.setUsername("guest");
        connections.setPassword("guest");
        admin.declareExchange(deadLetters);
        Queue dlq = new Queue(queue + ".dlq", false, false, false);
        admin.declareQueue(dlq);
        admin.declareBinding(BindingBuilder.bind(dlq).to(deadLetters).with(queue));
        admin.declareQueue(QueueBuilder.nonDurable(queue).deadLetterExchange(deadLetters.getName())
                .deadLetterRoutingKey(queue).build());
    }

    @AfterEach
    void deleteQueues() {
        admin.deleteQueue(queue);
        admin.deleteQueue(queue + ".dlq");
        admin.deleteExchange(deadLetters.getName());
        connections.destroy();
    }

    private void send(String body, String header) {
        new RabbitTemplate(connections).convertAndSend("", queue, body, message -> {
            if (header != null) {
                message.getMessageProperties().setHeader(TokenList.HEADER, header);
            }
            return message;
        });
    }

    @Test
    void aMessageCarryingATokenToAContainerThatTrustsNoSenderIsDeadLetteredUnrun() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            Ledger ledger = context.getBean(Ledger.class);
            String zombie = TokenList.format(List.of(new FencingToken("ledger", 5, "zombie")));

            send("zombie's deposit", zombie);
            Message deadLetter = new RabbitTemplate(connections).receive(queue + ".dlq", 10_000);
            assertThat(deadLetter).as("the zombie's message, dead-lettered").isNotNull();
            assertThat(new String(deadLetter.getBody(), StandardCharsets.UTF_8)).isEqualTo("zombie's deposit");
            assertThat(deadLetter.getMessageProperties().<String>getHeader(TokenList.HEADER)).isEqualTo(zombie);
            assertThat(ledger.postedNow()).as("the acquiring method did not run").isNull();

            send("own deposit", null);
            assertThat(ledger.nextPosted()).as("a message without the header runs under the consumer's lock")
                    .isEqualTo("own deposit");
            assertThat(ledger.postedNow()).isNull();
        });
    }

    /**
     * Boot's listener retry around a trusted container (a new user's re-trial): a stale token was run four times,
     * counted stale four times, and held the queue for the back-off. The starter's retry predicate leaves fence
     * refusals alone: one run, one count, one dead letter; the accepted message before it ran once too.
     */
    @Test
    void bootsListenerRetryDoesNotRunAFenceRefusalAgain() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RabbitAutoConfiguration.class,
                        FencingAutoConfiguration.class, FencingAmqpAutoConfiguration.class))
                .withUserConfiguration(TrustedConsumer.class)
                .withPropertyValues("spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672",
                        "spring.rabbitmq.listener.simple.retry.enabled=true",
                        "spring.rabbitmq.listener.simple.retry.initial-interval=200ms",
                        "fencing.store.type=in-memory", QUEUE_PROPERTY + "=" + queue)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    CheckedLedger ledger = context.getBean(CheckedLedger.class);
                    send("current", TokenList.format(List.of(new FencingToken("ledger", 5, "current"))));
                    assertThat(ledger.nextPosted()).isEqualTo("current");

                    send("zombie", TokenList.format(List.of(new FencingToken("ledger", 3, "zombie"))));
                    Message deadLetter = new RabbitTemplate(connections).receive(queue + ".dlq", 10_000);
                    assertThat(deadLetter).as("the zombie's message, dead-lettered").isNotNull();
                    assertThat(new String(deadLetter.getBody(), StandardCharsets.UTF_8)).isEqualTo("zombie");
                    assertThat(ledger.calls()).as("each message ran once").isEqualTo(2);
                    assertThat(context.getBean(MeterRegistry.class).get("fencing.checks").tag("outcome", "stale")
                            .counter().count()).isEqualTo(1.0);
                });
    }
    /** {@link TrustedConsumer}'s container, its advice counting on the application's registry. */
    @Configuration(proxyBeanMethods = false)
    static class CountingTrustedConsumer {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        java.util.Queue<dev.fencing.rule.TokenRejectedException> rejections() {
            return new java.util.concurrent.ConcurrentLinkedQueue<>();
        }

        @Bean
        dev.fencing.guard.RejectionListener rejectionListener(
                java.util.Queue<dev.fencing.rule.TokenRejectedException> rejections) {
            return rejections::add;
        }

        @Bean
        SimpleRabbitListenerContainerFactory trustedFactory(ConnectionFactory connectionFactory,
                                                            MeterRegistry registry) {
            SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
            factory.setConnectionFactory(connectionFactory);
            factory.setAdviceChain(new FencingTokenListenerAdvice().withMeterRegistry(registry));
            factory.setDefaultRequeueRejected(false);
            return factory;
        }

        @Bean
        CheckedLedger checkedLedger() {
            return new CheckedLedger();
        }

        @Bean
        TrustedDeposits trustedDeposits(CheckedLedger ledger) {
            return new TrustedDeposits(ledger);
        }
    }

    /**
     * With signed tokens ({@code fencing.signing.*}), the application's trusting advice verifies them before the
     * listener runs, as the starter's HTTP filter does: an unsigned (forged) token is dead-lettered and its listener,
     * whose work before the fenced write would have run, never runs; counted forged once. Before, the listener ran and
     * only its fenced write was refused. A validly signed token runs and writes.
     */
    @Test
    void withSigningAForgedTokenIsDeadLetteredBeforeTheListenerRuns() {
        String secret = FencingSigningAutoConfigurationTest.SECRET;
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RabbitAutoConfiguration.class,
                        FencingAutoConfiguration.class, FencingSigningAutoConfiguration.class,
                        FencingAmqpAutoConfiguration.class))
                .withUserConfiguration(CountingTrustedConsumer.class)
                .withPropertyValues("spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672",
                        "fencing.store.type=in-memory", QUEUE_PROPERTY + "=" + queue,
                        "fencing.signing.scheme=hmac-sha256", "fencing.signing.current-key-id=k1",
                        "fencing.signing.keys.k1.secret=" + secret)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    CheckedLedger ledger = context.getBean(CheckedLedger.class);
                    String forged = TokenList.format(List.of(new FencingToken("ledger", 99, "forger")));
                    send("forged", forged);
                    Message deadLetter = new RabbitTemplate(connections).receive(queue + ".dlq", 10_000);
                    assertThat(deadLetter).as("the forged message, dead-lettered").isNotNull();
                    assertThat(new String(deadLetter.getBody(), StandardCharsets.UTF_8)).isEqualTo("forged");
                    assertThat(ledger.calls()).as("the listener did not run").isZero();
                    assertThat(context.getBean(MeterRegistry.class).get("fencing.checks").tag("outcome", "forged")
                            .tag("resource", "ledger").counter().count()).isEqualTo(1.0);
                    assertThat(context.getBean("rejections", java.util.Queue.class))
                            .as("told to the RejectionListener beans")
                            .singleElement().isInstanceOf(dev.fencing.rule.ForgedTokenException.class);

                    FencingToken signed = dev.fencing.signing.TokenSigner.hmac("k1",
                            java.util.Base64.getDecoder().decode(secret)).sign(new FencingToken("ledger", 5, "holder"));
                    send("signed", TokenList.format(List.of(signed)));
                    assertThat(ledger.nextPosted()).isEqualTo("signed");
                    assertThat(ledger.calls()).isEqualTo(1);
                });
    }
}

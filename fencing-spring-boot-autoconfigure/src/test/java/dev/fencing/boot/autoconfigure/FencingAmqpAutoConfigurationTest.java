package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import dev.fencing.amqp.FencingTokenListenerAdvice;
import dev.fencing.context.FencingContext;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.annotation.EnableRabbit;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.RetryInterceptorBuilder;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.Method;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A listener container without {@link FencingTokenListenerAdvice} would ignore the header of its messages, so an
 * acquiring method it reaches would set the sender's token aside unseen: the starter puts
 * {@link FencingTokenListenerAdvice#trustingNone()} at the head of the chain of every container factory bean and
 * container bean without one, keeps the rest of the chain, and names the containers at startup (INFO); a container
 * still without any (its chain replaced by a customizer) is warned about. A chain with the application's advice is
 * left alone. The containers do not start (no broker is needed; {@link AmqpUntrustedTokenTest} runs on one).
 */
@Timeout(60)
@ExtendWith(OutputCaptureExtension.class)
class FencingAmqpAutoConfigurationTest {

    private static final String REFUSING = "trust no sender's Fencing-Token header";
    private static final String IGNORING = "have no FencingTokenListenerAdvice, so they would ignore";
    private static final MethodInterceptor RETRY = invocation -> invocation.proceed();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAmqpAutoConfiguration.class))
            .withUserConfiguration(Listeners.class);

    @EnableRabbit
    @Configuration(proxyBeanMethods = false)
    static class Listeners {
        @Bean
        CachingConnectionFactory rabbitConnectionFactory() {
            return new CachingConnectionFactory("127.0.0.1");
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    static class Ledger {
        @RabbitListener(id = "ledger-deposits", queues = "fencing-amqp-check-unused")
        void deposit(String body) {
        }
    }

    /** An asynchronous listener: Spring AMQP acknowledges or rejects its message when the future completes. */
    static class AsyncLedger {
        @RabbitListener(id = "ledger-async", queues = "fencing-amqp-check-unused")
        java.util.concurrent.CompletableFuture<Void> deposit(String body) {
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }
    }

    @EnableRabbit
    @Configuration(proxyBeanMethods = false)
    static class AsyncListeners {
        @Bean
        CachingConnectionFactory rabbitConnectionFactory() {
            return new CachingConnectionFactory("127.0.0.1");
        }

        @Bean
        AsyncLedger asyncLedger() {
            return new AsyncLedger();
        }
    }

    private final ApplicationContextRunner asyncRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAmqpAutoConfiguration.class))
            .withUserConfiguration(AsyncListeners.class);

    private static SimpleRabbitListenerContainerFactory factory(boolean requeue, Advice... chain) {
        SimpleRabbitListenerContainerFactory factory = factory(chain);
        factory.setDefaultRequeueRejected(requeue);
        return factory;
    }

    /**
     * An asynchronous listener's failed result is rejected by Spring AMQP outside the advice, by the factory's
     * defaultRequeueRejected: with the default, a fence refusal would be redelivered for ever (a red-team review
     * counted 5,484 deliveries in 11 s), and the plain advice would report every message as unchecked at return.
     * Startup fails before any container starts, naming the container and both fixes.
     */
    @Test
    void anAsyncListenerWithThePlainAdviceAndRequeuedRejectionsFailsStartup() {
        asyncRunner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class, () -> {
                    SimpleRabbitListenerContainerFactory factory = factory(new FencingTokenListenerAdvice());
                    factory.setAutoStartup(true); // would start, and consume, were the check not ahead of it
                    return factory;
                })
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasRootCauseInstanceOf(dev.fencing.FencingConfigurationException.class)
                        .rootCause().hasMessageContaining("ledger-async (queues fencing-amqp-check-unused): its "
                                + "asynchronous listener's failed results are requeued by default")
                        .hasMessageContaining("setDefaultRequeueRejected(false)")
                        .hasMessageContaining(".forAsyncListeners()"));
    }

    @Test
    void anAsyncListenerWithTheAsyncAdviceButRequeuedRejectionsFailsStartup() {
        asyncRunner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        () -> factory(true, new FencingTokenListenerAdvice().forAsyncListeners()))
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .rootCause().hasMessageContaining("ledger-async (queues fencing-amqp-check-unused): its "
                                + "asynchronous listener's failed results are requeued by default")
                        .hasMessageNotContaining("would report every message as unchecked"));
    }

    @Test
    void anAsyncListenerWithTheAsyncAdviceAndNoRequeueStarts() {
        asyncRunner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        () -> factory(false, RETRY, new FencingTokenListenerAdvice().forAsyncListeners()))
                .run(context -> assertThat(context).hasNotFailed());
    }

    /**
     * Spring AMQP's stateless retry (what Boot's listener retry builds) runs its retried attempts past the advices
     * behind it: the application's advice there binds no token on a retry and lets a message it rejected reach the
     * listener (fencing-amqp's AmqpRetryOrderTest). The starter leaves a chain with the application's advice as it
     * is, so startup fails, naming the container and the order.
     */
    @Test
    void theApplicationsAdviceBehindAStatelessRetryFailsStartup() {
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        () -> factory(RetryInterceptorBuilder.stateless().build(), new FencingTokenListenerAdvice()))
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasRootCauseInstanceOf(dev.fencing.FencingConfigurationException.class)
                        .rootCause().hasMessageContaining("ledger-deposits (queues fencing-amqp-check-unused): its "
                                + "FencingTokenListenerAdvice comes after a stateless retry")
                        .hasMessageContaining("Put the FencingTokenListenerAdvice first"));
    }

    /** A transaction manager whose transactions do nothing. */
    static final class NoOpTransactions extends AbstractPlatformTransactionManager {
        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected void doBegin(Object transaction, TransactionDefinition definition) {
        }

        @Override
        protected void doCommit(DefaultTransactionStatus status) {
        }

        @Override
        protected void doRollback(DefaultTransactionStatus status) {
        }
    }

    /**
     * A container that commits a delivery's transaction of its own after the advice returned, under a store that
     * judges at commit: the store's refusal comes from that commit, outside the advice, and Spring AMQP requeues the
     * rollback whatever its requeue settings (a hot loop). Startup fails, naming the container and its manager.
     */
    @Test
    void aContainerCommittingItsOwnTransactionUnderAStoreThatJudgesAtCommitFailsStartup() {
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class, () -> {
                    SimpleRabbitListenerContainerFactory factory = factory(new FencingTokenListenerAdvice());
                    factory.setTransactionManager(new NoOpTransactions());
                    return factory;
                })
                .withBean(FenceStore.class, () -> new FenceStore() {
                    @Override
                    public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
                        return write.proceed();
                    }

                    @Override
                    public boolean judgesAtCommit() {
                        return true;
                    }
                })
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .rootCause().hasMessageContaining("ledger-deposits (queues fencing-amqp-check-unused) (")
                        .hasMessageContaining("run each delivery in a transaction they commit after"));
    }

    @Test
    void theApplicationsAdviceAheadOfAStatelessRetryStarts() {
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        () -> factory(new FencingTokenListenerAdvice(), RetryInterceptorBuilder.stateless().build()))
                .run(context -> assertThat(context).hasNotFailed());
    }

    /** The async advice never reports a token left unchecked: on a synchronous listener that would be silence. */
    @Test
    void aSynchronousListenerWithTheAsyncAdviceFailsStartup() {
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        () -> factory(false, new FencingTokenListenerAdvice().forAsyncListeners()))
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .rootCause().hasMessageContaining("ledger-deposits (queues fencing-amqp-check-unused): its "
                                + "listener is synchronous but its advice is FencingTokenListenerAdvice"
                                + ".forAsyncListeners()"));
    }

    /** A container that trusts no sender binds no token: its asynchronous listener is not the starter's business. */
    @Test
    void anAsyncListenerOnAContainerTrustingNoSenderStarts() {
        asyncRunner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        () -> factory(RETRY))
                .run(context -> assertThat(context).hasNotFailed());
    }

    private static SimpleRabbitListenerContainerFactory factory(Advice... chain) {
        SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
        factory.setConnectionFactory(new CachingConnectionFactory("127.0.0.1"));
        factory.setAutoStartup(false);
        factory.setAdviceChain(chain);
        return factory;
    }

    /** The refusing advice the starter added, one per context. */
    private static Advice refusing(org.springframework.context.ApplicationContext context) {
        return context.getBean(ListenerAdviceInstaller.class).installed();
    }

    private static Advice[] chain(AbstractMessageListenerContainer container) {
        return ListenerAdviceInstaller.chain(container);
    }

    private static AbstractMessageListenerContainer deposits(org.springframework.context.ApplicationContext context) {
        return (AbstractMessageListenerContainer) context.getBean(RabbitListenerEndpointRegistry.class)
                .getListenerContainer("ledger-deposits");
    }

    @Test
    void aFactoryWithoutTheAdviceGetsTheRefusalAheadOfItsOwnChainAndTheContainerIsNamed(CapturedOutput output) {
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        () -> factory(RETRY))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(chain(deposits(context))).containsExactly(refusing(context), RETRY);
                });
        assertThat(output)
                .contains("listener containers [ledger-deposits (queues fencing-amqp-check-unused)] have no "
                        + "FencingTokenListenerAdvice of "
                + "the application, so they " + REFUSING).doesNotContain(IGNORING);
    }

    @Test
    void aFactoryWithTheApplicationsAdviceIsLeftAsItIsAndNotNamed(CapturedOutput output) {
        FencingTokenListenerAdvice trusting = new FencingTokenListenerAdvice();
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        () -> factory(RETRY, trusting))
                .run(context -> assertThat(chain(deposits(context))).containsExactly(RETRY, trusting));
        assertThat(output).doesNotContain(REFUSING).doesNotContain(IGNORING);
    }

    /**
     * With a {@link dev.fencing.signing.TokenVerifier} bean (what {@code fencing.signing.*} gives), the application's
     * advice is replaced in its place by the same advice verifying with it, so that a forged token is rejected before
     * the listener runs, as the starter's HTTP filter refuses it; the rest of the chain stays. Without one, the
     * chain is left as it is (above).
     */
    @Test
    void withATokenVerifierTheApplicationsAdviceVerifiesInItsPlace() {
        FencingTokenListenerAdvice trusting = new FencingTokenListenerAdvice();
        dev.fencing.signing.TokenVerifier verifier = new dev.fencing.signing.TokenVerifier(
                dev.fencing.signing.KeyRing.of(dev.fencing.signing.VerificationKey.hmac("k1", new byte[32])));
        runner.withBean(dev.fencing.signing.TokenVerifier.class, () -> verifier)
                .withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        () -> factory(trusting, RETRY))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Advice[] chain = chain(deposits(context));
                    assertThat(chain).hasSize(2);
                    assertThat(chain[0]).isInstanceOfSatisfying(FencingTokenListenerAdvice.class,
                            advice -> assertThat(advice.isVerifying()).isTrue());
                    assertThat(chain[1]).isSameAs(RETRY);
                });
    }

    /**
     * A chain a container customizer replaced ignores the header: startup fails before any container starts, naming
     * it and the fix (a WARN let a new user's zombie message land on such a container).
     */
    @Test
    void aChainReplacedByACustomizerFailsStartupBeforeTheContainersStart() {
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class, () -> {
                    SimpleRabbitListenerContainerFactory factory = factory();
                    factory.setAutoStartup(true); // would start, and consume, were the check not ahead of it
                    factory.setContainerCustomizer(container -> container.setAdviceChain(RETRY));
                    return factory;
                })
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasRootCauseInstanceOf(dev.fencing.FencingConfigurationException.class)
                        .rootCause()
                        .hasMessageContaining("Listener containers [ledger-deposits (queues "
                                + "fencing-amqp-check-unused)] have no FencingTokenListenerAdvice, "
                                + "so they would ignore")
                        .hasMessageContaining("had their advice chain replaced (a container customizer)")
                        .hasMessageContaining("FencingTokenListenerAdvice.trustingNone()"));
    }

    /** Whether the listener registry was running when a lifecycle bean of phase 1 started. */
    static final AtomicBoolean REGISTRY_RAN = new AtomicBoolean();

    /**
     * A factory with a phase of its own (here 0) gives it to the listener registry, which then starts its containers
     * in that phase: the check, in a phase just below the default Integer.MAX_VALUE, ran after they had started and
     * consumed, their headers ignored. It now runs in the first phase of all.
     */
    @Test
    void aChainReplacedByACustomizerFailsStartupBeforeContainersOfAnEarlyPhaseStart() {
        REGISTRY_RAN.set(false);
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class, () -> {
                    SimpleRabbitListenerContainerFactory factory = factory();
                    factory.setAutoStartup(true);
                    factory.setPhase(0);
                    factory.setContainerCustomizer(container -> container.setAdviceChain(RETRY));
                    return factory;
                })
                .withBean("phaseOneProbe", SmartLifecycle.class, () -> new SmartLifecycle() {
                        private volatile boolean running;

                        @Override
                        public void start() {
                            running = true;
                            REGISTRY_RAN.set(true);
                        }

                        @Override
                        public void stop() {
                            running = false;
                        }

                        @Override
                        public boolean isRunning() {
                            return running;
                        }

                        @Override
                        public int getPhase() {
                            return 1;
                        }
                    })
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .rootCause().hasMessageContaining("have no FencingTokenListenerAdvice, so they would ignore"));
        assertThat(REGISTRY_RAN).as("phase 0 (the registry's containers) and 1 never started").isFalse();
    }

    @Test
    void aChainWithTheRefusalPutBackByTheCustomizerStarts() {
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class, () -> {
                    SimpleRabbitListenerContainerFactory factory = factory();
                    factory.setContainerCustomizer(container -> container.setAdviceChain(
                            FencingTokenListenerAdvice.trustingNone(), RETRY));
                    return factory;
                })
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void aContainerBeanWithoutTheAdviceGetsTheRefusalBeforeItBuildsItsListener(CapturedOutput output) {
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        FencingAmqpAutoConfigurationTest::factory)
                .withBean("auditContainer", SimpleMessageListenerContainer.class, () -> {
                    SimpleMessageListenerContainer container =
                            new SimpleMessageListenerContainer(new CachingConnectionFactory("127.0.0.1"));
                    container.setAutoStartup(false);
                    container.setMessageListener(message -> { });
                    return container;
                })
                .run(context -> assertThat(chain(context.getBean(SimpleMessageListenerContainer.class)))
                        .containsExactly(refusing(context)));
        assertThat(output)
                .contains("listener containers [ledger-deposits (queues fencing-amqp-check-unused), "
                        + "auditContainer] have no");
    }

    /**
     * The refusal the starter adds counts, on the application's registry, the fencing scopes a listener left open on
     * its thread, as an application's own advice built with {@code withMeterRegistry} does (it only logged them).
     */
    @Test
    void theAddedRefusalCountsTheScopesAListenerLeftOpen() {
        FencingToken leaked = new FencingToken("accounts:9", 5, "listener");
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        FencingAmqpAutoConfigurationTest::factory)
                .withBean(SimpleMeterRegistry.class)
                .withBean("auditContainer", SimpleMessageListenerContainer.class, () -> {
                    SimpleMessageListenerContainer container =
                            new SimpleMessageListenerContainer(new CachingConnectionFactory("127.0.0.1"));
                    container.setAutoStartup(false);
                    container.setMessageListener(message -> FencingContext.bind(leaked));
                    return container;
                })
                .run(context -> {
                    MessageProperties properties = new MessageProperties();
                    properties.setConsumerQueue("audit");
                    Method invoke = ReflectionUtils.findMethod(AbstractMessageListenerContainer.class,
                            "invokeListener", Channel.class, Object.class);
                    ReflectionUtils.makeAccessible(invoke);
                    ReflectionUtils.invokeMethod(invoke, context.getBean(SimpleMessageListenerContainer.class), null,
                            new Message(new byte[0], properties));
                    assertThat(FencingContext.isEmpty()).as("the leaked scope is closed").isTrue();
                    assertThat(context.getBean(SimpleMeterRegistry.class).get(FencingMetrics.LEFT_SCOPES)
                            .tag("carrier", "amqp").counter().count()).isEqualTo(1);
                });
    }

    @Test
    void aChildContextsRefreshDoesNotRepeatTheParentsReport(CapturedOutput output) {
        runner.withBean("rabbitListenerContainerFactory", SimpleRabbitListenerContainerFactory.class,
                        FencingAmqpAutoConfigurationTest::factory)
                .run(context -> {
                    try (AnnotationConfigApplicationContext child = new AnnotationConfigApplicationContext()) {
                        child.setParent(context);
                        child.refresh();
                    }
                });
        assertThat(output.getAll().split(REFUSING, -1)).hasSize(2);
    }

    /** The starter brings fencing-amqp; an application that excluded it is told at startup what that costs. */
    @Test
    void springAmqpWithoutFencingAmqpIsWarnedAboutAtStartup(CapturedOutput output) {
        ApplicationContextRunner fencing = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
                .withPropertyValues("fencing.store.type=in-memory");
        fencing.run(context -> assertThat(context).hasNotFailed());
        assertThat(output).doesNotContain("fencing-amqp, which the fencing starter brings, is not");
        fencing.withClassLoader(new org.springframework.boot.test.context.FilteredClassLoader("dev.fencing.amqp."))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains(FencingAutoConfiguration.WithoutFencingAmqp.WARNING);
    }
}

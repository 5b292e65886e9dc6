package dev.fencing.amqp.internal;

import dev.fencing.FencingConfigurationException;
import dev.fencing.amqp.FencingTokenListenerAdvice;
import dev.fencing.annotation.Fenced;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.amqp.rabbit.config.RetryInterceptorBuilder;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * fencing-amqp's startup check under {@code @EnableFencing} without Spring Boot, on a listener container bean (never
 * started, so no broker is needed): without {@link FencingTokenListenerAdvice} it fails startup naming the container
 * and the advice to add; with the advice, or without any container, the context starts.
 */
@Timeout(60)
class ListenerAdviceStartupCheckTest {

    public static class Ledger {
        @Fenced(resource = "ledger")
        public void append() {
        }
    }

    @Configuration
    @EnableFencing(proxyTargetClass = true)
    static class NoRabbit {
        @Bean
        FenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    @Configuration
    static class ContainerWithoutAdvice extends NoRabbit {
        @Bean
        CachingConnectionFactory connectionFactory() {
            return new CachingConnectionFactory("127.0.0.1", 5672);
        }

        @Bean
        SimpleMessageListenerContainer ledgerContainer(CachingConnectionFactory connectionFactory) {
            SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(connectionFactory);
            container.setQueueNames("ledger-entries");
            container.setAutoStartup(false);
            container.setMessageListener(message -> { });
            return container;
        }
    }

    @Configuration
    static class ContainerTrustingNone extends ContainerWithoutAdvice {
        @Override
        @Bean
        SimpleMessageListenerContainer ledgerContainer(CachingConnectionFactory connectionFactory) {
            SimpleMessageListenerContainer container = super.ledgerContainer(connectionFactory);
            container.setAdviceChain(FencingTokenListenerAdvice.trustingNone());
            return container;
        }
    }

    @Configuration
    static class ContainerAdviceBehindRetry extends ContainerWithoutAdvice {
        @Override
        @Bean
        SimpleMessageListenerContainer ledgerContainer(CachingConnectionFactory connectionFactory) {
            SimpleMessageListenerContainer container = super.ledgerContainer(connectionFactory);
            container.setAdviceChain(RetryInterceptorBuilder.stateless().maxRetries(2).build(),
                    new FencingTokenListenerAdvice());
            return container;
        }
    }

    @Configuration
    static class ContainerAdviceAheadOfRetry extends ContainerWithoutAdvice {
        @Override
        @Bean
        SimpleMessageListenerContainer ledgerContainer(CachingConnectionFactory connectionFactory) {
            SimpleMessageListenerContainer container = super.ledgerContainer(connectionFactory);
            container.setAdviceChain(new FencingTokenListenerAdvice(),
                    RetryInterceptorBuilder.stateless().maxRetries(2).build());
            return container;
        }
    }

    @Configuration
    static class FactoryAdviceBehindRetry extends NoRabbit {
        @Bean
        SimpleRabbitListenerContainerFactory ledgerFactory() {
            SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
            factory.setAdviceChain(RetryInterceptorBuilder.stateless().maxRetries(2).build(),
                    FencingTokenListenerAdvice.trustingNone());
            return factory;
        }
    }

    /** A transaction manager whose transactions do nothing: what the container would run each delivery in. */
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

    @Configuration
    static class ContainerTransactionsStoreChecksInTheBody extends ContainerWithoutAdvice {
        @Override
        @Bean
        SimpleMessageListenerContainer ledgerContainer(CachingConnectionFactory connectionFactory) {
            SimpleMessageListenerContainer container = super.ledgerContainer(connectionFactory);
            container.setAdviceChain(new FencingTokenListenerAdvice());
            container.setTransactionManager(new NoOpTransactions());
            return container;
        }
    }

    @Configuration
    static class ContainerTransactionsStoreJudgesAtCommit extends ContainerTransactionsStoreChecksInTheBody {
        @Override
        @Bean
        FenceStore fenceStore() {
            InMemoryFenceStore memory = new InMemoryFenceStore();
            return new FenceStore() {
                @Override
                public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
                    return memory.fence(resource, token, write);
                }

                @Override
                public boolean judgesAtCommit() {
                    return true;
                }
            };
        }
    }

    /**
     * A container that commits a transaction of its own after the advice returned, under a store that judges at
     * commit: the store refuses at the container's commit, outside the advice, and Spring AMQP requeues that
     * rollback whatever its settings (a trial: thousands of redeliveries in seconds). It used to start.
     */
    @Test
    void aContainerCommittingItsOwnTransactionUnderAStoreThatJudgesAtCommitFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(ContainerTransactionsStoreJudgesAtCommit.class)
                .close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Listener containers [ledgerContainer (queues ledger-entries) (")
                .hasMessageContaining("NoOpTransactions)] run each delivery in a transaction")
                .hasMessageContaining("@Transactional on the listener method");
    }

    @Test
    void aContainerCommittingItsOwnTransactionUnderAStoreThatChecksInTheBodyStarts() {
        try (AnnotationConfigApplicationContext context =
                     new AnnotationConfigApplicationContext(ContainerTransactionsStoreChecksInTheBody.class)) {
            assertThat(context.getBean(SimpleMessageListenerContainer.class).isRunning()).isFalse();
        }
    }

    /**
     * Spring AMQP's stateless retry runs its retried attempts past the advices behind it (AmqpRetryOrderTest shows it
     * on the broker): an advice there binds no token on a retry and lets a rejected message's listener run. Startup
     * used to accept such a chain, since it has the advice.
     */
    @Test
    void anAdviceBehindAStatelessRetryFailsStartupNamingTheContainerAndTheOrder() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(ContainerAdviceBehindRetry.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("listener container ledgerContainer (queues ledger-entries), its "
                        + "FencingTokenListenerAdvice comes after a stateless retry")
                .hasMessageContaining("Put the FencingTokenListenerAdvice first");
    }

    @Test
    void aFactoryWithTheRefusalBehindAStatelessRetryFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(FactoryAdviceBehindRetry.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("listener container factory ledgerFactory, its FencingTokenListenerAdvice "
                        + "comes after a stateless retry");
    }

    @Test
    void anAdviceAheadOfAStatelessRetryStarts() {
        try (AnnotationConfigApplicationContext context =
                     new AnnotationConfigApplicationContext(ContainerAdviceAheadOfRetry.class)) {
            assertThat(context.getBean(SimpleMessageListenerContainer.class).isRunning()).isFalse();
        }
    }

    @Test
    void aContainerWithoutTheAdviceFailsStartupNamingItAndTheFix() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(ContainerWithoutAdvice.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Listener containers [ledgerContainer (queues ledger-entries)] have no "
                        + "FencingTokenListenerAdvice")
                .hasMessageContaining("FencingTokenListenerAdvice.trustingNone()");
    }

    @Test
    void aContainerTrustingNoneStarts() {
        try (AnnotationConfigApplicationContext context =
                     new AnnotationConfigApplicationContext(ContainerTrustingNone.class)) {
            assertThat(context.getBean(SimpleMessageListenerContainer.class).isRunning()).isFalse();
        }
    }

    @Test
    void aContextWithoutContainersStarts() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(NoRabbit.class)) {
            assertThat(context.getBean(Ledger.class)).isNotNull();
        }
    }
}

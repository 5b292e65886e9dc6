package dev.fencing.spring;

import dev.fencing.annotation.Fenced;
import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The fence check must run inside the caller's transaction, as a database store needs it. */
class TransactionOrderTest {

    /** Records whether a transaction was active when the store checked the token. */
    static final class RecordingStore implements FenceStore {
        final InMemoryFenceStore delegate = new InMemoryFenceStore();
        final List<Boolean> transactionActiveAtCheck = new CopyOnWriteArrayList<>();

        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
            transactionActiveAtCheck.add(TransactionSynchronizationManager.isActualTransactionActive());
            return delegate.fence(resource, token, write);
        }
    }

    /** A transaction manager with no resource behind it: enough to open real Spring transactions. */
    static final class NoResourceTransactionManager extends AbstractPlatformTransactionManager {
        private static final long serialVersionUID = 1L;

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

    static class TransactionalRepository {
        @Transactional
        @Fenced(resource = "orders")
        public void save() {
        }
    }

    /** {@code @Transactional} on the type, {@code @Fenced} on a method: the same ordering rule applies. */
    @Transactional
    static class TypeTransactionalRepository {
        @Fenced(resource = "orders")
        public void save() {
        }
    }

    static class PlainRepository {
        @Fenced(resource = "orders")
        public void save() {
        }
    }

    static class TransactionalService {
        private final PlainRepository repository;

        TransactionalService(PlainRepository repository) {
            this.repository = repository;
        }

        @Transactional
        public void work() {
            repository.save();
        }
    }

    @Configuration
    static class Base {
        @Bean
        RecordingStore store() {
            return new RecordingStore();
        }

        @Bean
        PlatformTransactionManager transactionManager() {
            return new NoResourceTransactionManager();
        }
    }

    @Configuration
    @EnableTransactionManagement(order = 0)
    @EnableFencing
    static class OrderedSameMethod extends Base {
        @Bean
        TransactionalRepository repository() {
            return new TransactionalRepository();
        }
    }

    /** Equal orders with the fence advisor registered first (its annotation first): the fence would run outside. */
    @Configuration
    @EnableFencing
    @EnableTransactionManagement
    static class UnorderedSameMethod extends Base {
        @Bean
        TransactionalRepository repository() {
            return new TransactionalRepository();
        }
    }

    @Configuration
    @EnableTransactionManagement(order = 0)
    @EnableFencing
    static class OrderedTypeLevel extends Base {
        @Bean
        TypeTransactionalRepository repository() {
            return new TypeTransactionalRepository();
        }
    }

    /** Equal orders with the fence advisor registered first (its annotation first): the fence would run outside. */
    @Configuration
    @EnableFencing
    @EnableTransactionManagement
    static class UnorderedTypeLevel extends Base {
        @Bean
        TypeTransactionalRepository repository() {
            return new TypeTransactionalRepository();
        }
    }

    @Configuration
    @EnableTransactionManagement(order = 10)
    @EnableFencing(order = 5)
    static class FenceOutsideTypeLevel extends Base {
        @Bean
        TypeTransactionalRepository repository() {
            return new TypeTransactionalRepository();
        }
    }

    /** Equal orders with the transaction advisor registered first, as in Spring Boot: the fence runs inside. */
    @Configuration
    @EnableTransactionManagement
    @EnableFencing
    static class EqualOrdersTransactionFirst extends Base {
        @Bean
        TransactionalRepository repository() {
            return new TransactionalRepository();
        }
    }

    @Configuration
    @EnableTransactionManagement
    @EnableFencing
    static class CallerTransaction extends Base {
        @Bean
        PlainRepository repository() {
            return new PlainRepository();
        }

        @Bean
        TransactionalService service(PlainRepository repository) {
            return new TransactionalService(repository);
        }
    }

    @Test
    void sameMethodWithTheFenceOrderedInsideRunsTheCheckInTheTransaction() {
        try (var ctx = new AnnotationConfigApplicationContext(OrderedSameMethod.class)) {
            FencingContext.run(new FencingToken("orders", 1, "h"), () ->
                    ctx.getBean(TransactionalRepository.class).save());
            assertThat(ctx.getBean(RecordingStore.class).transactionActiveAtCheck).containsExactly(true);
        }
    }

    @Test
    void equalOrdersWithTheTransactionAdvisorRegisteredFirstStartAndCheckInTheTransaction() {
        try (var ctx = new AnnotationConfigApplicationContext(EqualOrdersTransactionFirst.class)) {
            FencingContext.run(new FencingToken("orders", 1, "h"), () ->
                    ctx.getBean(TransactionalRepository.class).save());
            assertThat(ctx.getBean(RecordingStore.class).transactionActiveAtCheck).containsExactly(true);
        }
    }

    @Test
    void sameMethodWithDefaultOrdersFailsAtStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(UnorderedSameMethod.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("TransactionalRepository.save()")
                .hasMessageContaining("@EnableTransactionManagement(order = 0)");
    }

    @Test
    void typeLevelTransactionalWithTheFenceOrderedInsideStartsAndChecksInTheTransaction() {
        try (var ctx = new AnnotationConfigApplicationContext(OrderedTypeLevel.class)) {
            FencingContext.run(new FencingToken("orders", 1, "h"),
                    () -> ctx.getBean(TypeTransactionalRepository.class).save());
            assertThat(ctx.getBean(RecordingStore.class).transactionActiveAtCheck).containsExactly(true);
        }
    }

    @Test
    void typeLevelTransactionalWithDefaultOrdersFailsAtStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(UnorderedTypeLevel.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("TypeTransactionalRepository.save()")
                .hasMessageContaining("@EnableTransactionManagement(order = 0)");
    }

    @Test
    void typeLevelTransactionalWithTheFenceOrderedOutsideFailsAtStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(FenceOutsideTypeLevel.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("TypeTransactionalRepository.save()")
                .hasMessageContaining("fence advisor (order 5) would run outside the transaction advisor (order 10)");
    }

    @Test
    void repositoryCalledFromATransactionalServiceChecksInsideItsTransaction() {
        try (var ctx = new AnnotationConfigApplicationContext(CallerTransaction.class)) {
            FencingContext.run(new FencingToken("orders", 1, "h"), () ->
                    ctx.getBean(TransactionalService.class).work());
            assertThat(ctx.getBean(RecordingStore.class).transactionActiveAtCheck).containsExactly(true);
        }
    }
}

package dev.fencing.jdbc;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What {@link TransactionOrigins} records of the transactions of the managers it listens to, on H2: the innermost
 * live transaction that bound something, per thread, and nothing left on a thread once they ended, whichever way.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TransactionOriginsTest {

    private HikariDataSource storeSource;
    private HikariDataSource otherSource;
    private DataSourceTransactionManager storeManager;
    private DataSourceTransactionManager otherManager;

    @BeforeAll
    void pools() {
        storeSource = Database.H2.newPool(3);
        otherSource = Database.H2.newPool(3);
        storeManager = new DataSourceTransactionManager(storeSource);
        otherManager = new DataSourceTransactionManager(otherSource);
        TransactionOrigins.listenTo(storeManager, "'store'");
        TransactionOrigins.listenTo(otherManager, "'other'");
    }

    @AfterAll
    void close() {
        storeSource.close();
        otherSource.close();
    }

    private TransactionTemplate in(DataSourceTransactionManager manager, int propagation) {
        TransactionTemplate template = new TransactionTemplate(manager);
        template.setPropagationBehavior(propagation);
        return template;
    }

    @Test
    void theInnermostTransactionThatBoundSomethingDecides() {
        TransactionTemplate store = in(storeManager, TransactionDefinition.PROPAGATION_REQUIRED);
        TransactionTemplate other = in(otherManager, TransactionDefinition.PROPAGATION_REQUIRED);
        store.executeWithoutResult(outer -> {
            assertThat(TransactionOrigins.innermostWithout(storeSource)).isNull();
            other.executeWithoutResult(inner -> {
                assertThat(TransactionOrigins.innermostWithout(storeSource))
                        .isEqualTo("'other' (DataSourceTransactionManager)");
                assertThat(TransactionOrigins.innermostWithout(otherSource)).isNull();
                // joining the store's transaction begins nothing: the other one is still the innermost
                store.executeWithoutResult(joined ->
                        assertThat(TransactionOrigins.innermostWithout(storeSource)).isNotNull());
                in(storeManager, TransactionDefinition.PROPAGATION_REQUIRES_NEW).executeWithoutResult(fresh ->
                        assertThat(TransactionOrigins.innermostWithout(storeSource)).isNull());
            });
            assertThat(TransactionOrigins.innermostWithout(storeSource)).isNull();
        });
        assertThat(TransactionOrigins.onThisThread()).isZero();
    }

    @Test
    void aSavepointBindsNothingAndDoesNotHideTheTransactionItIsIn() {
        TransactionTemplate other = in(otherManager, TransactionDefinition.PROPAGATION_REQUIRED);
        TransactionTemplate nested = in(otherManager, TransactionDefinition.PROPAGATION_NESTED);
        in(storeManager, TransactionDefinition.PROPAGATION_REQUIRED).executeWithoutResult(outer ->
                other.executeWithoutResult(inner -> nested.executeWithoutResult(savepoint -> {
                    assertThat(TransactionOrigins.onThisThread()).isEqualTo(3);
                    assertThat(TransactionOrigins.innermostWithout(storeSource))
                            .isEqualTo("'other' (DataSourceTransactionManager)");
                })));
        assertThat(TransactionOrigins.onThisThread()).isZero();
    }

    @Test
    void anotherThreadDoesNotSeeThisThreadsTransactions() throws Exception {
        AtomicReference<String> seen = new AtomicReference<>("not run");
        in(otherManager, TransactionDefinition.PROPAGATION_REQUIRED).executeWithoutResult(status ->
                seen.set(CompletableFuture.supplyAsync(() -> TransactionOrigins.innermostWithout(storeSource))
                        .orTimeout(10, TimeUnit.SECONDS).join()));
        assertThat(seen.get()).isNull();
    }

    @Test
    void aTransactionThatFailedToBeginOrRolledBackLeavesNothing() {
        DataSource broken = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        throw new SQLException("no connection");
                    }
                    return method.getName().equals("toString") ? "broken" : null;
                });
        DataSourceTransactionManager brokenManager = new DataSourceTransactionManager(broken);
        TransactionOrigins.listenTo(brokenManager, "'broken'");
        assertThatThrownBy(() -> new TransactionTemplate(brokenManager).executeWithoutResult(status -> { }))
                .isInstanceOf(CannotCreateTransactionException.class);
        assertThat(TransactionOrigins.onThisThread()).isZero();
        assertThatThrownBy(() -> in(otherManager, TransactionDefinition.PROPAGATION_REQUIRED)
                .executeWithoutResult(status -> {
                    throw new IllegalStateException("body failed");
                })).hasMessage("body failed");
        assertThat(TransactionOrigins.onThisThread()).isZero();
    }

    @Test
    void aTransactionWhoseEndWasNotHeardIsDroppedOnceCompleted() {
        DataSourceTransactionManager forgetful = new DataSourceTransactionManager(otherSource);
        TransactionOrigins.listenTo(forgetful, "'forgetful'");
        in(storeManager, TransactionDefinition.PROPAGATION_REQUIRED).executeWithoutResult(outer -> {
            new TransactionTemplate(forgetful).executeWithoutResult(inner ->
                    forgetful.setTransactionExecutionListeners(List.of()));   // its end is not heard
            assertThat(TransactionOrigins.innermostWithout(storeSource)).isNull();
        });
        assertThat(TransactionOrigins.onThisThread()).isZero();
    }

    /**
     * A manager's own resource bound before its transaction begins (an entity manager opened for the request by
     * open-in-view, which the JPA transaction then takes over; here a connection bound before a data source
     * transaction) is held by that transaction: it is not taken for another data source's transaction.
     */
    @Test
    void aResourceBoundBeforeTheBeginAndTakenOverIsHeldByTheTransaction() throws Exception {
        try (Connection connection = storeSource.getConnection()) {
            TransactionSynchronizationManager.bindResource(storeSource, new ConnectionHolder(connection));
            try {
                in(otherManager, TransactionDefinition.PROPAGATION_REQUIRED).executeWithoutResult(outer ->
                        in(storeManager, TransactionDefinition.PROPAGATION_REQUIRED).executeWithoutResult(inner ->
                                assertThat(TransactionOrigins.innermostWithout(storeSource)).isNull()));
            } finally {
                TransactionSynchronizationManager.unbindResource(storeSource);
            }
        }
        assertThat(TransactionOrigins.onThisThread()).isZero();
    }

    /** A manager that takes no listeners (a wrapper around one) is named in a warning, once, since it goes unseen. */
    @Test
    void aManagerThatTakesNoListenersIsWarnedAbout() {
        Logger logger = (Logger) LoggerFactory.getLogger(TransactionOrigins.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try {
            PlatformTransactionManager wrapper = new PlatformTransactionManager() {
                @Override
                public TransactionStatus getTransaction(TransactionDefinition definition) {
                    return otherManager.getTransaction(definition);
                }

                @Override
                public void commit(TransactionStatus status) {
                    otherManager.commit(status);
                }

                @Override
                public void rollback(TransactionStatus status) {
                    otherManager.rollback(status);
                }
            };
            TransactionOrigins.listenTo(wrapper, "'wrapped'");
            TransactionOrigins.listenTo(wrapper, "'wrapped'");   // the starter's post-processor, then a store bean
        } finally {
            logger.detachAppender(appender);
        }
        assertThat(appender.list).singleElement().satisfies(event -> {
            assertThat(event.getLevel()).isEqualTo(Level.WARN);
            assertThat(event.getFormattedMessage()).contains("'wrapped'").contains("takes no transaction listeners")
                    .contains("TransactionOrigins.listenTo");
        });
    }

    @Test
    void listenersAlreadySetAreKeptAndListeningTwiceAddsOne() {
        DataSourceTransactionManager manager = new DataSourceTransactionManager(otherSource);
        TransactionExecutionListener own = new TransactionExecutionListener() {
            @Override
            public void afterBegin(TransactionExecution transaction, Throwable beginFailure) {
            }
        };
        manager.setTransactionExecutionListeners(List.of(own));   // unmodifiable, as Spring Boot sets them
        TransactionOrigins.listenTo(manager, "'m'");
        TransactionOrigins.listenTo(manager, "'m'");
        assertThat(manager.getTransactionExecutionListeners()).hasSize(2).contains(own);
    }
}

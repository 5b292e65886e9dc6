package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

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
                assertThat(TransactionOrigins.innermostWithout(storeSource)).isEqualTo("'other' (DataSourceTransactionManager)");
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
                    assertThat(TransactionOrigins.innermostWithout(storeSource)).isEqualTo("'other' (DataSourceTransactionManager)");
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

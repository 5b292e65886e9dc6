package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.FenceStore;
import dev.fencing.store.OutsideTransactionException;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A {@code JdbcFenceStore} one of its {@code RoutingFenceStore} bean's routes holds, in an {@code @EnableFencing}
 * application without Spring Boot: a fenced call whose innermost transaction is another manager's, nested inside one
 * of the store's DataSource, would be checked in the outer transaction while its body commits with the inner one. The
 * store is no bean, and nothing registers {@code TransactionOrigins.beanPostProcessor()} (the starter would), so
 * {@code @EnableFencing}'s startup check hands it the bean factory before verifying it, and it listens to every
 * transaction manager bean as the same store as a bean does: the call is refused before its body
 * ({@code OutsideTransactionException}). Closed either way: startup fails naming {@code TransactionOrigins}, or the
 * call is refused before its body.
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RoutedStoreOtherManagerWithoutStarterTest {

    private static final String TABLE = Database.uniqueTable("parity_routed");

    /** The write the fence guards; records each body that ran. */
    public static class Ledger {
        final List<String> written = new CopyOnWriteArrayList<>();

        @Fenced(resource = "ledger")
        public void append(String entry) {
            written.add(entry);
        }

        public List<String> written() {
            return written;
        }
    }

    /** A method of the other DataSource's manager, called from a transaction of the store's. */
    public static class OtherDatabase {
        private final Ledger ledger;

        public OtherDatabase(Ledger ledger) {
            this.ledger = ledger;
        }

        @Transactional("otherTransactionManager")
        public void append(String entry) {
            ledger.append(entry);
        }
    }

    public static class Service {
        private final OtherDatabase other;

        public Service(OtherDatabase other) {
            this.other = other;
        }

        @Transactional("transactionManager")
        public void append(String entry) {
            other.append(entry);
        }
    }

    @Configuration
    @EnableFencing(proxyTargetClass = true)
    @EnableTransactionManagement(order = 0)
    static class Application {
        @Bean(destroyMethod = "close")
        @Primary
        HikariDataSource dataSource() {
            return Database.H2.newPool(4);
        }

        @Bean(destroyMethod = "close")
        HikariDataSource otherDataSource() {
            return Database.H2.newPool(2);
        }

        @Bean
        @Primary
        PlatformTransactionManager transactionManager(HikariDataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        PlatformTransactionManager otherTransactionManager() {
            return new DataSourceTransactionManager(otherDataSource());
        }

        @Bean
        FenceStore fenceStore(HikariDataSource dataSource, PlatformTransactionManager transactionManager) {
            return RoutingFenceStore.builder().route("ledger", JdbcFenceStore.builder(dataSource).table(TABLE)
                    .createTableIfMissing(true).transactionManager(transactionManager).build()).build();
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }

        @Bean
        OtherDatabase otherDatabase(Ledger ledger) {
            return new OtherDatabase(ledger);
        }

        @Bean
        Service service(OtherDatabase other) {
            return new Service(other);
        }
    }

    /** The control: the same store as a bean of its own, which listens to every transaction manager bean. */
    @Configuration
    static class StoreAsBean extends Application {
        @Override
        @Bean
        FenceStore fenceStore(HikariDataSource dataSource, PlatformTransactionManager transactionManager) {
            return JdbcFenceStore.builder(dataSource).table(TABLE).createTableIfMissing(true)
                    .transactionManager(transactionManager).build();
        }
    }

    private HikariDataSource cleanup;

    @BeforeAll
    void pool() {
        cleanup = Database.H2.newPool(1);
    }

    @AfterAll
    void dropTable() {
        new JdbcTemplate(cleanup).execute("DROP TABLE IF EXISTS " + TABLE);
        cleanup.close();
    }

    @Test
    void aFencedCallInAnotherManagersTransactionNestedInTheStoresIsRefusedBeforeItsBody() {
        nestedCallIn(Application.class);
    }

    @Test
    void theStoreAsABeanRefusesIt() {
        nestedCallIn(StoreAsBean.class);
    }

    private static void nestedCallIn(Class<?> application) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.register(application);
        Throwable startup = catchThrowable(context::refresh);
        try {
            if (startup != null) {
                assertThat(startup).isInstanceOf(FencingConfigurationException.class)
                        .hasMessageContaining("TransactionOrigins");
                return;
            }
            Throwable call;
            try (FencingScope ignored = FencingContext.bind(new FencingToken("ledger", 7, "holder"))) {
                call = catchThrowable(() -> context.getBean(Service.class).append("written apart from its check"));
            }
            assertThat(context.getBean(Ledger.class).written()).as("bodies run").isEmpty();
            assertThat(call).isInstanceOf(OutsideTransactionException.class);
        } finally {
            context.close();
        }
    }
}

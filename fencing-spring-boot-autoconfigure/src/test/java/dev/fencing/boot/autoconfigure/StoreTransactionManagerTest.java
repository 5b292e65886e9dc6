package dev.fencing.boot.autoconfigure;

import dev.fencing.store.FenceStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.PlatformTransactionManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter's store takes the primary DataSource and the primary transaction manager; when that manager is another
 * DataSource's (two databases, the two {@code @Primary} marks on different ones, as in a new user's trial), startup
 * fails naming both, instead of checking in autocommit apart from the method's writes.
 */
@Timeout(60)
class StoreTransactionManagerTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(FencingAutoConfigurationTest.FENCING)
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class))
            .withPropertyValues(FencingAutoConfigurationTest.h2("store-tm"));

    @Test
    void thePrimaryManagerOfAnotherDataSourceFailsStartup() {
        DriverManagerDataSource other = new DriverManagerDataSource("jdbc:h2:mem:store-tm-other");
        runner.withBean("otherTm", PlatformTransactionManager.class, () -> new DataSourceTransactionManager(other))
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .rootCause().hasMessageContaining("not the store's DataSource")
                        .hasMessageContaining("primary DataSource and the primary transaction manager"));
    }

    @Test
    void bootsOwnManagerOfThePrimaryDataSourceIsAccepted() {
        runner.run(context -> assertThat(context).hasNotFailed().hasSingleBean(FenceStore.class));
    }
}

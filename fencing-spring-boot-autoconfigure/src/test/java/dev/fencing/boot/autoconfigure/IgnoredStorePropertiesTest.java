package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * {@code fencing.store.jdbc.*} properties are read by the starter's store only: with a fence store bean of the
 * application's own they have no effect, and startup says so (a {@code check-at-commit=true} that would otherwise
 * check before the body without a word). Nothing is said when the starter builds the store, or when none is set.
 * Several transaction managers without a primary one are named in an INFO line: the starter's store then checks in a
 * manager of its own.
 */
@Timeout(60)
@ExtendWith(OutputCaptureExtension.class)
class IgnoredStorePropertiesTest {

    private static final String WARNING = "which the starter does not build: these properties have no effect";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(FencingAutoConfigurationTest.FENCING)
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class))
            .withPropertyValues(FencingAutoConfigurationTest.h2("ignored"));

    @Test
    void propertiesSetForAStoreOfTheApplicationsOwnAreNamedInAWarning(CapturedOutput output) {
        runner.withBean("myFenceStore", FenceStore.class, InMemoryFenceStore::new)
                .withPropertyValues("fencing.store.jdbc.check-at-commit=true", "fencing.store.jdbc.lock-timeout=2s")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains(WARNING).contains("fencing.store.jdbc.lock-timeout, "
                + "fencing.store.jdbc.check-at-commit set").contains("(myFenceStore)");
    }

    /**
     * An AOT-processed application registers its beans as plain definitions naming their factory bean, without the
     * factory method's metadata: the starter's own store is still told from the application's (a false warning on
     * every AOT start otherwise).
     */
    @Test
    void theStartersStoreIsToldFromTheApplicationsInAnAotProcessedApplicationToo() {
        org.springframework.beans.factory.support.DefaultListableBeanFactory factory =
                new org.springframework.beans.factory.support.DefaultListableBeanFactory();
        factory.registerBeanDefinition(FencingJdbcAutoConfiguration.class.getName(),
                new org.springframework.beans.factory.support.RootBeanDefinition(FencingJdbcAutoConfiguration.class));
        org.springframework.beans.factory.support.RootBeanDefinition starters =
                new org.springframework.beans.factory.support.RootBeanDefinition(FenceStore.class);
        starters.setFactoryBeanName(FencingJdbcAutoConfiguration.class.getName());
        starters.setFactoryMethodName("fenceStore");
        factory.registerBeanDefinition("fenceStore", starters);
        factory.registerBeanDefinition("myConfig",
                new org.springframework.beans.factory.support.RootBeanDefinition(Object.class));
        org.springframework.beans.factory.support.RootBeanDefinition own =
                new org.springframework.beans.factory.support.RootBeanDefinition(FenceStore.class);
        own.setFactoryBeanName("myConfig");
        own.setFactoryMethodName("myFenceStore");
        factory.registerBeanDefinition("myFenceStore", own);
        assertThat(FencingJdbcAutoConfiguration.starters(factory, "fenceStore")).isTrue();
        assertThat(FencingJdbcAutoConfiguration.starters(factory, "myFenceStore")).isFalse();
    }

    @Test
    void severalTransactionManagersWithoutAPrimaryOneAreNamedInAnInfoLine(CapturedOutput output) {
        String said = "several transaction managers and none of them primary";
        runner.run(context -> assertThat(context).hasNotFailed().hasSingleBean(FenceStore.class));
        assertThat(output).as("Boot's one manager").doesNotContain(said);
        runner.withBean("firstTm", PlatformTransactionManager.class,
                        () -> new DataSourceTransactionManager(new DriverManagerDataSource("jdbc:h2:mem:first")))
                .withBean("secondTm", PlatformTransactionManager.class,
                        () -> new DataSourceTransactionManager(new DriverManagerDataSource("jdbc:h2:mem:second")))
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(FenceStore.class));
        assertThat(output).contains(said).contains("@Primary");
    }

    @Test
    void nothingIsSaidWhenTheStarterBuildsTheStoreOrNothingIsSet(CapturedOutput output) {
        runner.withPropertyValues("fencing.store.jdbc.lock-timeout=2s")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(FenceStore.class));
        runner.withBean("myFenceStore", FenceStore.class, InMemoryFenceStore::new)
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).doesNotContain(WARNING);
    }
}

package dev.fencing.boot.autoconfigure;

import dev.fencing.jdbc.JdbcFenceStore;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.datasource.LazyConnectionDataSourceProxy;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;

import javax.sql.DataSource;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The startup warning of connections a fenced write could take apart from the check's transaction (a helper's trial
 * had a stale token's write commit after a newer one's through each): the pool bean behind the store's
 * {@code LazyConnectionDataSourceProxy}, and a {@code DSLContext} built by hand on the store's DataSource; not a
 * {@code TransactionAwareDataSourceProxy} over the pool, nor a {@code DSLContext} built on one.
 */
@ExtendWith(OutputCaptureExtension.class)
class WriteConnectionsCheckTest {

    private static final String POOL_BEHIND = "DataSource bean 'rawDataSource' is the pool behind the fence store's "
            + "DataSource 'dataSource'";
    private static final String DSL_DIRECT = "DSLContext bean 'dsl' takes its connections from the fence store's "
            + "DataSource";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(FencingAutoConfigurationTest.FENCING)
            .withConfiguration(AutoConfigurations.of(DataSourceTransactionManagerAutoConfiguration.class,
                    TransactionAutoConfiguration.class));

    private static DataSource h2() {
        return new DriverManagerDataSource("jdbc:h2:mem:write-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;INIT="
                + "RUNSCRIPT FROM 'classpath:dev/fencing/jdbc/schema-h2.sql'");
    }

    /** The pool, a bean of its own, behind the primary DataSource each subclass wraps it in. */
    abstract static class PoolBehindPrimary {
        @Bean
        DataSource rawDataSource() {
            return h2();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LazyPrimary extends PoolBehindPrimary {
        @Bean
        @Primary
        DataSource dataSource(@Qualifier("rawDataSource") DataSource raw) {
            return new LazyConnectionDataSourceProxy(raw);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class TransactionAwarePrimary extends PoolBehindPrimary {
        @Bean
        @Primary
        DataSource dataSource(@Qualifier("rawDataSource") DataSource raw) {
            return new TransactionAwareDataSourceProxy(raw);
        }
    }

    /** The store on the pool itself, and a bean that wraps it: code on the wrapper finds nothing bound. */
    @Configuration(proxyBeanMethods = false)
    static class WrapperAbove {
        @Bean
        @Primary
        DataSource dataSource() {
            return h2();
        }

        @Bean
        DataSource lazyDataSource(@Qualifier("dataSource") DataSource pool) {
            return new LazyConnectionDataSourceProxy(pool);
        }

        @Bean
        DSLContext dsl(@Qualifier("dataSource") DataSource pool) {
            return DSL.using(new LazyConnectionDataSourceProxy(pool), SQLDialect.H2);
        }
    }

    /** A routing DataSource as the store's, its targets beans of their own. */
    @Configuration(proxyBeanMethods = false)
    static class RoutingPrimary {
        @Bean
        DataSource rawDataSource() {
            return h2();
        }

        @Bean
        @Primary
        DataSource dataSource(@Qualifier("rawDataSource") DataSource raw) {
            AbstractRoutingDataSource routing = new AbstractRoutingDataSource() {
                @Override
                protected Object determineCurrentLookupKey() {
                    return "main";
                }
            };
            routing.setTargetDataSources(Map.of("main", raw));
            routing.afterPropertiesSet();
            return routing;
        }
    }

    /** A jOOQ context on the pool under a transaction-aware store: it bypasses the proxy transactions see through. */
    @Configuration(proxyBeanMethods = false)
    static class DslUnderTransactionAwareStore extends TransactionAwarePrimary {
        @Bean
        DSLContext dsl(@Qualifier("rawDataSource") DataSource raw) {
            return DSL.using(raw, SQLDialect.H2);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class HandBuiltDsl {
        @Bean
        DSLContext dsl(DataSource dataSource) {
            return DSL.using(dataSource, SQLDialect.H2);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class TransactionAwareDsl {
        @Bean
        DSLContext dsl(DataSource dataSource) {
            return DSL.using(new TransactionAwareDataSourceProxy(dataSource), SQLDialect.H2);
        }
    }

    /** Spring Boot's DataSource on an H2 database with the fence table. */
    private ApplicationContextRunner withBootDataSource() {
        return runner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=jdbc:h2:mem:dsl-" + UUID.randomUUID()
                        + ";DB_CLOSE_DELAY=-1;INIT=RUNSCRIPT FROM 'classpath:dev/fencing/jdbc/schema-h2.sql'");
    }

    @Test
    void thePoolBehindTheStoresLazyProxyIsNamed(CapturedOutput output) {
        runner.withUserConfiguration(LazyPrimary.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(JdbcFenceStore.class);
            assertThat(output).contains(POOL_BEHIND + " (LazyConnectionDataSourceProxy)")
                    .contains("finds no transaction");
        });
    }

    @Test
    void thePoolBehindATransactionAwareProxyIsNotNamed(CapturedOutput output) {
        runner.withUserConfiguration(TransactionAwarePrimary.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(JdbcFenceStore.class);
            assertThat(output).doesNotContain("is the pool behind the fence store's DataSource");
        });
    }

    @Test
    void aDslContextBuiltOnTheStoresDataSourceIsNamed(CapturedOutput output) {
        withBootDataSource().withUserConfiguration(HandBuiltDsl.class).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(JdbcFenceStore.class);
                    assertThat(output).contains(DSL_DIRECT).contains("TransactionAwareDataSourceProxy");
                });
    }

    @Test
    void aBeanWrappingTheStoresDataSourceAndADslContextOnSuchAWrapperAreNamed(CapturedOutput output) {
        runner.withUserConfiguration(WrapperAbove.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(JdbcFenceStore.class);
            assertThat(output).contains("DataSource bean 'lazyDataSource' wraps the fence store's DataSource "
                    + "'dataSource'").contains("DSLContext bean 'dsl' takes its connections from the fence store's");
        });
    }

    @Test
    void theTargetsOfARoutingDataSourceAreNamed(CapturedOutput output) {
        runner.withUserConfiguration(RoutingPrimary.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(JdbcFenceStore.class);
            assertThat(output).contains("DataSource bean 'rawDataSource' is the pool behind the fence store's "
                    + "DataSource 'dataSource'");
        });
    }

    @Test
    void aDslContextOnThePoolUnderATransactionAwareStoreIsNamed(CapturedOutput output) {
        runner.withUserConfiguration(DslUnderTransactionAwareStore.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(JdbcFenceStore.class);
            assertThat(output).contains(DSL_DIRECT).doesNotContain("is the pool behind the fence store's");
        });
    }

    @Test
    void aDslContextOnATransactionAwareProxyIsNotNamed(CapturedOutput output) {
        withBootDataSource().withUserConfiguration(TransactionAwareDsl.class).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(JdbcFenceStore.class);
                    assertThat(output).doesNotContain("takes its connections from");
                });
    }
}

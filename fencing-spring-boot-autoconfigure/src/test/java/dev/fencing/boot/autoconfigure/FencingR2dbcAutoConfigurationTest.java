package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.r2dbc.R2dbcDialect;
import dev.fencing.r2dbc.R2dbcFenceStore;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import io.r2dbc.spi.ConnectionFactory;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcTransactionManagerAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * The reactive stores: fencing-r2dbc's {@link R2dbcFenceStore} on Boot's R2DBC {@link ConnectionFactory} (PostgreSQL's
 * driver; the store connects only when checked, so no table is needed here), the in-memory one as an opt-in, and
 * the application's own {@link ReactiveFenceStore} winning over both.
 */
@ExtendWith(OutputCaptureExtension.class)
class FencingR2dbcAutoConfigurationTest {

    private static final String R2DBC_URL = "spring.r2dbc.url=r2dbc:postgresql://127.0.0.1:5432/test";
    private static final String R2DBC_USER = "spring.r2dbc.username=postgres";

    /** The blocking side has its in-memory store, so the context starts without a DataSource. */
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                    FencingR2dbcAutoConfiguration.class))
            .withBean(FenceStore.class, InMemoryFenceStore::new);

    private final ApplicationContextRunner r2dbc = runner.withConfiguration(
            AutoConfigurations.of(R2dbcAutoConfiguration.class)).withPropertyValues(R2DBC_URL, R2DBC_USER);

    @Test
    void aConnectionFactoryGivesAnR2dbcStoreWithItsProperties() {
        r2dbc.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(ReactiveFenceStore.class);
            R2dbcFenceStore store = context.getBean(R2dbcFenceStore.class);
            assertThat(store.table()).isEqualTo("fencing_max_seen");
            assertThat(store.lockTimeout()).isEqualTo(Duration.ofSeconds(5));
            assertThat(store.dialect()).isEqualTo(R2dbcDialect.POSTGRESQL);
        });
        r2dbc.withPropertyValues("fencing.store.r2dbc.table=ledger_fence", "fencing.store.r2dbc.lock-timeout=750ms")
                .run(context -> {
                    R2dbcFenceStore store = context.getBean(R2dbcFenceStore.class);
                    assertThat(store.table()).isEqualTo("ledger_fence");
                    assertThat(store.lockTimeout()).isEqualTo(Duration.ofMillis(750));
                });
    }

    /**
     * A connection factory besides the store's is named at startup: a fenced method writing through it is checked on
     * the store's database and writes outside that transaction (a trial kept token 15's write after 20's). One factory
     * alone says nothing.
     */
    @Test
    void anotherConnectionFactoryIsNamedAtStartup(CapturedOutput output) {
        String url = "r2dbc:postgresql://postgres@127.0.0.1:5432/test";
        String warning = "writes outside the check's transaction";
        r2dbc.run(context -> assertThat(context).hasNotFailed());
        assertThat(output.getAll()).doesNotContain(warning);
        runner.withBean("connectionFactory", io.r2dbc.spi.ConnectionFactory.class,
                        () -> io.r2dbc.spi.ConnectionFactories.get(url), definition -> definition.setPrimary(true))
                .withBean("otherCf", io.r2dbc.spi.ConnectionFactory.class,
                        () -> io.r2dbc.spi.ConnectionFactories.get(url))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(R2dbcFenceStore.class);
                    assertThat(output.getAll()).contains("a fenced method that writes through 'otherCf' is checked "
                            + "there but " + warning).doesNotContain("through 'connectionFactory'");
                });
    }

    /** Ordered after Boot's R2DBC auto-configuration, so Boot's R2dbcTransactionManager is still defined. */
    @Test
    void bootsReactiveTransactionManagerIsStillDefined() {
        r2dbc.withConfiguration(AutoConfigurations.of(FencingJdbcAutoConfiguration.class,
                        R2dbcTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class))
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(R2dbcTransactionManager.class)
                        .hasSingleBean(R2dbcFenceStore.class));
    }

    @Test
    void anInvalidTableNameFailsStartupNamingIt() {
        r2dbc.withPropertyValues("fencing.store.r2dbc.table=fence; drop table x").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("fence; drop table x");
        });
    }

    @Test
    void theApplicationsReactiveStoreWins() {
        r2dbc.withBean("myReactiveStore", ReactiveFenceStore.class, InMemoryReactiveFenceStore::new).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(R2dbcFenceStore.class);
            assertThat(context.getBeansOfType(ReactiveFenceStore.class)).containsOnlyKeys("myReactiveStore");
        });
        r2dbc.withPropertyValues("fencing.store.type=in-memory")
                .withBean("myReactiveStore", ReactiveFenceStore.class, InMemoryReactiveFenceStore::new)
                .run(context -> assertThat(context.getBeansOfType(ReactiveFenceStore.class))
                        .containsOnlyKeys("myReactiveStore"));
    }

    @Test
    void withoutAConnectionFactoryOrWithoutFencingR2dbcThereIsNoReactiveStore() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(ReactiveFenceStore.class));
        r2dbc.withClassLoader(new FilteredClassLoader(R2dbcFenceStore.class)).run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(ReactiveFenceStore.class));
    }

    @Test
    void theInMemoryReactiveStoreIsAnOptInSaidAtStartup(CapturedOutput output) {
        r2dbc.withPropertyValues("fencing.store.type=in-memory").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(R2dbcFenceStore.class);
            assertThat(context.getBean(ReactiveFenceStore.class)).isExactlyInstanceOf(InMemoryReactiveFenceStore.class);
        });
        assertThat(output).contains("fencing.store.type=in-memory: using an InMemoryReactiveFenceStore");
        // without fencing-r2dbc too: the in-memory store is fencing-reactor's
        runner.withPropertyValues("fencing.store.type=IN_MEMORY")
                .withClassLoader(new FilteredClassLoader(R2dbcFenceStore.class))
                .run(context -> assertThat(context).hasSingleBean(InMemoryReactiveFenceStore.class));
        // and never without the property
        runner.run(context -> assertThat(context).doesNotHaveBean(InMemoryReactiveFenceStore.class));
        // nor without fencing-reactor
        runner.withPropertyValues("fencing.store.type=in-memory")
                .withClassLoader(new FilteredClassLoader(InMemoryReactiveFenceStore.class, R2dbcFenceStore.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(ReactiveFenceStore.class));
    }

    @Test
    void fencingEnabledFalseDefinesNoReactiveStore() {
        r2dbc.withPropertyValues("fencing.enabled=false").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(ReactiveFenceStore.class));
        r2dbc.withPropertyValues("fencing.enabled=false", "fencing.store.type=in-memory").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(ReactiveFenceStore.class));
    }
}

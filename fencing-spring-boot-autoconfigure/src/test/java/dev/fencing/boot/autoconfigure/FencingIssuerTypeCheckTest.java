package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.annotation.Fenced;
import dev.fencing.etcd.EtcdTokenIssuer;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** {@code fencing.issuer.type} naming an issuer that no bean provides fails startup, saying what to add. */
@ExtendWith(OutputCaptureExtension.class)
class FencingIssuerTypeCheckTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class, FencingJdbcAutoConfiguration.class,
                    FencingZooKeeperAutoConfiguration.class, FencingEtcdAutoConfiguration.class))
            .withPropertyValues("fencing.store.type=in-memory",
                    "fencing.store.in-memory.single-instance=true");

    @Test
    void zookeeperWithoutFencingZookeeperFailsNamingTheDependency() {
        runner.withClassLoader(new FilteredClassLoader(ZooKeeperTokenIssuer.class))
                .withPropertyValues("fencing.issuer.type=zookeeper").run(context -> {
                    assertThat(context).hasFailed();
                    FailureAnalysis analysis = new FencingFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).contains("fencing.issuer.type=zookeeper")
                            .contains("dev.fencing.zookeeper.ZooKeeperTokenIssuer")
                            .contains("dev.fencing:fencing-zookeeper");
                    assertThat(analysis.getAction()).contains("remove fencing.issuer.type");
                });
    }

    /**
     * The issuers the starter does not build (Redisson, Hazelcast) are the values a user tries first: a trial with
     * fencing.issuer.type=redisson was told only "No enum constant ...IssuerType.redisson". The failure says to
     * declare the issuer bean, which the starter then uses, and to remove the property.
     */
    @Test
    void anIssuerTheStarterDoesNotBuildFailsSayingToDeclareItsBean() {
        for (String type : new String[] {"redisson", "hazelcast"}) {
            runner.withPropertyValues("fencing.issuer.type=" + type).run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).hasMessageContaining("fencing.issuer.type=" + type)
                        .hasMessageContaining("declare the issuer as a bean")
                        .hasMessageContaining("docs/issuers.md")
                        .hasMessageContaining("remove fencing.issuer.type");
            });
        }
    }

    public static class AcquiringLedger {
        @Fenced(resource = "ledger", acquire = true)
        public String post() {
            return "posted";
        }
    }

    @Test
    void withAnAcquiringMethodTheMissingModuleIsNamedNotJustTheMissingIssuer() {
        runner.withClassLoader(new FilteredClassLoader(ZooKeeperTokenIssuer.class)).withBean(AcquiringLedger.class)
                .withPropertyValues("fencing.issuer.type=zookeeper").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasMessageContaining("dev.fencing:fencing-zookeeper");
                });
    }

    /** An R2DBC ConnectionFactory that is never connected: Boot's DataSource auto-configuration backs off for it. */
    static final class UnusedConnectionFactory implements io.r2dbc.spi.ConnectionFactory {
        @Override
        public org.reactivestreams.Publisher<? extends io.r2dbc.spi.Connection> create() {
            throw new UnsupportedOperationException("not connected in this test");
        }

        @Override
        public io.r2dbc.spi.ConnectionFactoryMetadata getMetadata() {
            return () -> "unused";
        }
    }

    /**
     * The database lease in an application on R2DBC: Boot makes no DataSource while a ConnectionFactory is defined,
     * even with spring.datasource.url set, so the message says to declare one (it said to set the URL, already set).
     */
    @Test
    void theJdbcLeaseWithAConnectionFactoryAndNoDataSourceSaysBootMakesNone() {
        runner.withBean(io.r2dbc.spi.ConnectionFactory.class, UnusedConnectionFactory::new)
                .withPropertyValues("fencing.store.type=in-memory", "fencing.issuer.type=jdbc",
                        "spring.datasource.url=jdbc:h2:mem:unused")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .hasMessageContaining("creates none while an R2DBC ConnectionFactory is defined")
                            .hasMessageContaining("declare a DataSource bean yourself")
                            .hasMessageNotContaining("set spring.datasource.url");
                });
        runner.withPropertyValues("fencing.store.type=in-memory", "fencing.issuer.type=jdbc").run(context ->
                assertThat(context.getStartupFailure()).hasMessageContaining("no DataSource bean: set "
                        + "spring.datasource.url"));
    }

    @Test
    void typeValuesBindAsThePropertiesDoSoConditionsNeverDisagreeWithThem() {
        runner.withPropertyValues("fencing.store.type=inmemory").run(context ->
                assertThat(context).hasNotFailed().hasSingleBean(InMemoryFenceStore.class));
        runner.withPropertyValues("fencing.store.type=IN_MEMORY").run(context ->
                assertThat(context).hasNotFailed().hasSingleBean(InMemoryFenceStore.class));
        runner.withPropertyValues("fencing.issuer.type=ZooKeeper",
                "fencing.issuer.zookeeper.connect-string=127.0.0.1:1").run(context ->
                assertThat(context).hasNotFailed().hasSingleBean(ZooKeeperTokenIssuer.class));
    }

    @Test
    void fencingEnabledFalseWarnsThatFencedMethodsRunUnchecked(CapturedOutput output) {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                        FencingDisabledAutoConfiguration.class)).withPropertyValues("fencing.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(
                        FencingDisabledAutoConfiguration.class));
        assertThat(output).contains(FencingDisabledAutoConfiguration.WARNING);
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
                FencingDisabledAutoConfiguration.class)).run(context ->
                assertThat(context).doesNotHaveBean(FencingDisabledAutoConfiguration.class));
    }

    /** Another issuer type's properties were ignored without a word (a new user's trial). */
    @Test
    void anotherIssuerTypesPropertiesAreAWarning(CapturedOutput output) {
        ApplicationContextRunner plain = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
                .withPropertyValues("fencing.store.type=in-memory");
        plain.withPropertyValues("fencing.issuer.zookeeper.connect-string=127.0.0.1:2181",
                "fencing.issuer.etcd.lease-ttl=10s").run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("fencing.issuer.zookeeper.connect-string, fencing.issuer.etcd.lease-ttl are set, "
                + "but fencing.issuer.type is none: the starter's issuer reads none of them");
        int before = output.getAll().length();
        FencingAutoConfiguration.otherIssuersProperties(new org.springframework.mock.env.MockEnvironment()
                .withProperty("fencing.issuer.jdbc.table", "old_lease")
                .withProperty("fencing.issuer.offset.base", "1000"), "zookeeper");
        assertThat(output.getAll().substring(before)).as("the previous issuer's lease table, read by the offset")
                .doesNotContain("the starter's issuer reads none");
        FencingAutoConfiguration.otherIssuersProperties(new org.springframework.mock.env.MockEnvironment()
                .withProperty("fencing.issuer.jdbc.table", "old_lease"), "zookeeper");
        assertThat(output.getAll().substring(before)).as("read by the one-sequence issuer's startup check")
                .doesNotContain("the starter's issuer reads none");
        FencingAutoConfiguration.otherIssuersProperties(new org.springframework.mock.env.MockEnvironment()
                .withProperty("fencing.issuer.jdbc.table", "old_lease"), null);
        assertThat(output.getAll().substring(before)).contains("fencing.issuer.jdbc.table is set, but "
                + "fencing.issuer.type is none");
    }

    @dev.fencing.spring.EnableFencing(allowInMemoryStore = true)
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class OwnEnableFencing {
    }

    /** Beside the application's own @EnableFencing, which still fences, the warning no longer says it is off. */
    @Test
    void fencingEnabledFalseBesideAnOwnEnableFencingSaysItStillFences(CapturedOutput output) {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class,
                        FencingDisabledAutoConfiguration.class)).withUserConfiguration(OwnEnableFencing.class)
                .withPropertyValues("fencing.enabled=false")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains(FencingDisabledAutoConfiguration.OWN_ENABLE)
                .doesNotContain(FencingDisabledAutoConfiguration.WARNING);
    }

    @Test
    void etcdWithoutFencingEtcdFailsNamingTheDependency() {
        runner.withClassLoader(new FilteredClassLoader(EtcdTokenIssuer.class))
                .withPropertyValues("fencing.issuer.type=etcd").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasMessageContaining("fencing.issuer.type=etcd")
                            .hasMessageContaining("dev.fencing:fencing-etcd");
                });
    }

    @Test
    void jdbcWithoutFencingJdbcOrWithoutADataSourceFailsSayingWhich() {
        runner.withClassLoader(new FilteredClassLoader(JdbcTokenIssuer.class))
                .withPropertyValues("fencing.issuer.type=jdbc").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasMessageContaining("dev.fencing:fencing-jdbc");
                });
        runner.withPropertyValues("fencing.issuer.type=jdbc").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining("fencing.issuer.type=jdbc")
                    .hasMessageContaining("no DataSource bean").hasMessageContaining("spring.datasource.url")
                    .hasMessageContaining("fencing.issuer.type=zookeeper or etcd");
        });
        // a reactive application: fencing-jdbc is there (the starter's), Boot's JDBC support is not
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.jdbc."))
                .withPropertyValues("fencing.issuer.type=jdbc").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasMessageContaining("spring.datasource.url")
                            .hasMessageContaining("spring-boot-starter-jdbc")
                            .hasMessageNotContaining("add the dependency dev.fencing:fencing-jdbc");
                });
    }

    @Test
    void theUsersIssuerSatisfiesTheTypeAndNoTypeNeedsNoIssuer() {
        runner.withClassLoader(new FilteredClassLoader(ZooKeeperTokenIssuer.class))
                .withUserConfiguration(OwnIssuer.class).withPropertyValues("fencing.issuer.type=zookeeper")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(TokenIssuer.class));
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(TokenIssuer.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnIssuer {
        @Bean
        InMemoryTokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }
    }
}

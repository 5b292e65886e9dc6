package dev.fencing.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.support.SpringFactoriesLoader;

/** Fencing's startup failures through Boot's failure analysis: a Description naming the method, and an Action. */
@ExtendWith(OutputCaptureExtension.class)
class FencingFailureAnalyzerTest {

    public static class Ledger {
        @Fenced(resource = "ledger", key = "#acount")
        public String post(long account) {
            return "posted";
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(FencingAutoConfiguration.class)
    static class BadKeyApplication {
        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    public static class Orders {
        @Fenced(resource = "orders-analyzer", key = "#id")
        public void ship(long id) {
        }

        @Fenced(resource = "orders-analyzer")
        public void reprice() {
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(FencingAutoConfiguration.class)
    static class MixedKeyApplication {
        @Bean
        Orders orders() {
            return new Orders();
        }
    }

    private static Throwable start(Map<String, Object> properties) {
        return start(BadKeyApplication.class, properties);
    }

    private static Throwable start(Class<?> source, Map<String, Object> properties) {
        SpringApplication application = new SpringApplication(source);
        application.setWebApplicationType(WebApplicationType.NONE);
        application.setDefaultProperties(properties);
        return catchThrowable(application::run);
    }

    @Test
    void theAnalyzerIsRegisteredForBoot() {
        // Boot's own analyzers need its constructor arguments: only whether ours loads matters here
        assertThat(SpringFactoriesLoader.forDefaultResourceLocation().load(FailureAnalyzer.class,
                SpringFactoriesLoader.ArgumentResolver.none(), SpringFactoriesLoader.FailureHandler.handleMessage(
                        (message, failure) -> { })))
                .hasAtLeastOneElementOfType(FencingFailureAnalyzer.class);
    }

    @Test
    void aBadKeyFailsTheApplicationWithADescriptionNamingTheMethodAndAnAction(CapturedOutput output) {
        Throwable failure = start(Map.of("fencing.store.type", "in-memory", "spring.main.banner-mode", "off"));
        assertThat(failure).isNotNull();

        FailureAnalysis analysis = new FencingFailureAnalyzer().analyze(failure);
        assertThat(analysis).isNotNull();
        assertThat(analysis.getCause()).isInstanceOf(FencingConfigurationException.class);
        assertThat(analysis.getDescription()).startsWith("Fencing refused to start")
                .contains("Invalid fencing configuration (mode PROXY").contains("#acount")
                .contains("Ledger.post(long)");
        assertThat(analysis.getAction()).contains("Fix each problem").endsWith(FencingFailureAnalyzer.DOCS);

        // what Boot printed instead of a stack trace
        assertThat(output).contains("APPLICATION FAILED TO START").contains("Fencing refused to start")
                .contains("Ledger.post(long)").contains("docs/startup-checks.md");
    }

    @Test
    void noStoreGetsTheStoreFix() {
        Throwable failure = start(Map.of("spring.main.banner-mode", "off"));
        FailureAnalysis analysis = new FencingFailureAnalyzer().analyze(failure);
        assertThat(analysis).isNotNull();
        assertThat(analysis.getDescription()).contains("found no FenceStore");
        assertThat(analysis.getAction()).contains("spring.datasource.url").contains("fencing.store.type=in-memory")
                .contains("fencing.enabled=false").endsWith(FencingFailureAnalyzer.DOCS);
    }

    /**
     * A missing table's action says which property applies to the starter's store and what to a store bean of one's
     * own.
     */
    @Test
    void aMissingTableGetsThePropertyForTheStartersStoreAndTheBuilderOptionForOneOfYourOwn() {
        String action = FencingFailureAnalyzer.action("Fence table 'ledger_fence' is missing or unusable on MariaDB "
                + "(...). Create it with the script dev/fencing/jdbc/schema-mariadb.sql (see the README), or build the "
                + "store with createTableIfMissing(true)");
        assertThat(action).contains("fencing.store.jdbc.initialize-schema=always (for the starter's own store; a "
                + "JdbcFenceStore bean of your own").contains("createTableIfMissing(true)");
        assertThat(FencingFailureAnalyzer.action("Lease table 'l' is missing or unusable on H2 (...). Create it ... "
                + "createTableIfMissing(true)")).contains("fencing.issuer.jdbc.initialize-schema=always (for the "
                + "starter's own issuer; a JdbcTokenIssuer bean of your own creates it").doesNotContain("Routing");
    }

    /**
     * A verifier with nothing to sign gets the signing fix, not the issuer's (a signing trial's Action said to
     * configure an issuer).
     */
    @Test
    void aVerifierWithNothingToSignGetsTheSigningFixNotTheIssuers() {
        String action = FencingFailureAnalyzer.action("Invalid fencing configuration (mode PROXY; the @Fenced "
                + "methods, the fence store, the issuer):\n  - @Fenced(acquire = true) on Caller.run(long): a "
                + "TokenVerifier bean makes every @Fenced check refuse unsigned tokens, but the TokenIssuer "
                + "(JdbcTokenIssuer) does not sign and there is no TokenSigner bean, so every write with its tokens "
                + "would be refused as forged: add a TokenSigner bean (with the Spring Boot starter: "
                + "fencing.signing.current-key-id and the key's secret or private-key), or acquire through new "
                + "SigningTokenIssuer(issuer, signer)");
        assertThat(action).contains("set fencing.signing.current-key-id").doesNotContain("Configure an issuer")
                .doesNotContain("Fix the fencing.signing property");
    }

    /**
     * The description leaves the builder call to the Action, which says when it applies (a trial read them as two
     * fixes).
     */
    @Test
    void aMissingTablesDescriptionLeavesTheBuilderCallToTheAction() {
        String message = "Fence table 'ledger_fence' is missing or unusable on MariaDB (Table 'test.ledger_fence' "
                + "doesn't exist). Create it with the script dev/fencing/jdbc/schema-mariadb.sql (see the README), or "
                + "build the store with createTableIfMissing(true)";
        FailureAnalysis analysis = new FencingFailureAnalyzer().analyze(new FencingConfigurationException(message));
        assertThat(analysis.getDescription()).endsWith("schema-mariadb.sql (see the README)")
                .doesNotContain("createTableIfMissing");
        assertThat(analysis.getAction()).contains("fencing.store.jdbc.initialize-schema=always")
                .contains("createTableIfMissing(true)");
        assertThat(FencingFailureAnalyzer.withoutBuilderAdvice("Lease table 'l' is missing or unusable on H2 (x). "
                + "Create it with the script s, or build the issuer with createTableIfMissing(true)"))
                .isEqualTo("Lease table 'l' is missing or unusable on H2 (x). Create it with the script s");
    }

    @Test
    void oneResourceCheckedWithAndWithoutAKeyGetsItsOwnAction() {
        Throwable failure = start(MixedKeyApplication.class,
                Map.of("fencing.store.type", "in-memory", "spring.main.banner-mode", "off"));
        assertThat(failure).isNotNull();

        FailureAnalysis analysis = new FencingFailureAnalyzer().analyze(failure);
        assertThat(analysis).isNotNull();
        assertThat(analysis.getDescription()).contains("Orders.ship(long)").contains("Orders.reprice()");
        assertThat(analysis.getAction()).contains("keyed everywhere").contains("@Fenced(acquire = true)")
                .doesNotContain("Fix each problem").endsWith(FencingFailureAnalyzer.DOCS);
        assertThat(FencingFailureAnalyzer.action("resources 'Orders' (A.a()) and 'orders' (B.b()) differ in letter "
                + "case only: ...")).contains("spelt the same way");
        assertThat(FencingFailureAnalyzer.action("resources 'caf\u00e9' (written \"caf\\u00E9\") (A.a()) and "
                + "'cafe\u0301' (written \"cafe\\u0301\") (B.b()) look alike but are spelled with different "
                + "characters (...): ...")).contains("spelt the same way");
    }

    @Test
    void anywhereInTheCauseChainAndTheBeanIsNamed() {
        FencingConfigurationException cause = new FencingConfigurationException("@Fenced(acquire = true) on "
                + "Ledger.post(long) needs a TokenIssuer to acquire locks for resource 'ledger', "
                + "and none is configured");
        Throwable root = new IllegalStateException("wrapped", new BeanCreationException("ledgerService", "failed",
                new RuntimeException(cause)));
        FailureAnalysis analysis = new FencingFailureAnalyzer().analyze(root);
        assertThat(analysis.getDescription()).contains("bean 'ledgerService'").contains("Ledger.post(long)");
        assertThat(analysis.getAction()).contains("fencing.issuer.type=jdbc").contains("TokenIssuer bean");
    }

    @Test
    void checkingAtCommitOnADatabaseWithoutItGetsTheWayOut() {
        FencingConfigurationException cause = new FencingConfigurationException("JdbcFenceStore checkAtCommit(true) "
                + "is supported on PostgreSQL only, and the database is H2 (dialect H2); remove checkAtCommit "
                + "(fencing.store.jdbc.check-at-commit) to check before the method body, "
                + "which works on every database");
        FailureAnalysis analysis = new FencingFailureAnalyzer().analyze(new BeanCreationException("fenceStore",
                "failed", cause));
        assertThat(analysis.getAction()).contains("PostgreSQL").contains("not MariaDB")
                .contains("DataSourceTransactionManager")
                .contains("fencing.store.jdbc.check-at-commit").doesNotContain("names the method")
                .endsWith(FencingFailureAnalyzer.DOCS);
    }

    /**
     * The bean named is the one whose creation threw, not the first bean that happened to depend on it: a trial's
     * application without fencing.issuer.etcd.endpoints read "while creating bean 'fencingEndpoint'" (the actuator
     * endpoint, which needs the issuer, which needs the starter's jetcd client, the bean that refused).
     */
    @Test
    @org.junit.jupiter.api.Timeout(10)
    void theBeanNamedIsTheOneWhoseCreationFailed() {
        FencingConfigurationException cause = new FencingConfigurationException("fencing.issuer.type=etcd needs the "
                + "etcd endpoints: set fencing.issuer.etcd.endpoints");
        BeanCreationException client = new BeanCreationException("fencingEtcdClient", "failed", cause);
        BeanCreationException issuer = new BeanCreationException("tokenIssuer", "failed", client);
        FailureAnalysis analysis = new FencingFailureAnalyzer().analyze(
                new BeanCreationException("fencingEndpoint", "failed", issuer));
        assertThat(analysis.getDescription()).startsWith("Fencing refused to start (while creating bean "
                + "'fencingEtcdClient'):");
    }

    @Test
    void otherFailuresAreNotFencings() {
        assertThat(new FencingFailureAnalyzer().analyze(new IllegalStateException("not ours"))).isNull();
    }
}

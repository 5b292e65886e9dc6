package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** A misspelt fencing.* key fails startup naming it and the key meant; known keys, map and list keys pass. */
@ExtendWith(OutputCaptureExtension.class)
class PropertyNamesCheckTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingAutoConfiguration.class))
            .withBean(InMemoryFenceStore.class, () -> new InMemoryFenceStore());

    @Test
    void theMetadataIsReadAndKnowsTheStartersProperties() {
        assertThat(PropertyNamesCheck.knownNames(getClass().getClassLoader()))
                .contains("fencing.compaction.idle-for", "fencing.issuer.offset.base", "fencing.modes");
    }

    @Test
    void misspeltKeysFailStartupNamingEachAndTheKeyMeant() {
        runner.withPropertyValues("fencing.compaction.idel-for=1d", "fencing.issuer.ofset.base=1000",
                        "fencing.modez.accounts=observe")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .isInstanceOf(FencingConfigurationException.class)
                        .hasMessageContaining("'fencing.compaction.idel-for': "
                                + "did you mean 'fencing.compaction.idle-for'?")
                        .hasMessageContaining("'fencing.issuer.ofset.base': did you mean 'fencing.issuer.offset.base'?")
                        .hasMessageContaining("'fencing.modez.accounts'"));
    }

    @Test
    void knownKeysMapKeysListIndexesAndRelaxedSpellingsStart() {
        runner.withPropertyValues("fencing.acquire-timeout=5s", "fencing.acquireTimeout=5s",
                        "fencing.modes.accounts=observe", "fencing.modes.[orders:eu]=enforce",
                        "fencing.web.client.propagate-to[0]=ledger.internal",
                        "fencing.signing.keys.k1.secret=c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA==",
                        "fencing.compaction.enabled=false")
                .run(context -> assertThat(context.getStartupFailure() == null ? null
                        : context.getStartupFailure().getMessage()).doesNotContain("Unknown fencing properties"));
    }

    /**
     * Values Spring Boot would misread fail startup, each named (a new user's trial): a switch of "yes" left
     * compaction off, a duration without a unit was milliseconds (a 5 ms lock wait bound), an empty max-advance (a
     * placeholder's empty default) meant no bound. Well-formed values start.
     */
    @Test
    void valuesBootWouldMisreadFailStartupNamingEach() {
        runner.withPropertyValues("fencing.compaction.enabled=yes", "fencing.store.jdbc.lock-timeout=5",
                        "fencing.store.jdbc.max-advance=", "fencing.acquire-timeout=-10")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).isInstanceOf(FencingConfigurationException.class)
                            .hasMessageContaining("'fencing.compaction.enabled' is 'yes', but takes true or false")
                            .hasMessageContaining("'fencing.store.jdbc.lock-timeout' is '5', a number without a unit, "
                                    + "which Spring Boot reads as 5 milliseconds")
                            .hasMessageContaining("'fencing.store.jdbc.max-advance' is set but empty")
                            .hasMessageContaining("'fencing.acquire-timeout' is '-10'");
                });
        runner.withPropertyValues("fencing.compaction.enabled=FALSE", "fencing.store.jdbc.lock-timeout=5s",
                        "fencing.store.jdbc.max-advance=1000", "fencing.compaction.idle-for=30",
                        "fencing.acquire-timeout=PT2S")
                .run(context -> assertThat(context).hasNotFailed());
    }

    /** A table name no store takes fails naming the property, not the builder it reached. */
    @Test
    void aTableNameNoStoreTakesFailsNamingTheProperty() {
        runner.withPropertyValues("fencing.issuer.jdbc.table=misconf-lease").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("fencing.issuer.jdbc.table 'misconf-lease' is not a table name");
        });
        runner.withPropertyValues("fencing.store.jdbc.table=app.fence_rows").run(context ->
                assertThat(context).hasNotFailed());
    }

    /** A trailing space (a properties file keeps it) left a switch off: Boot's conditions do not trim. */
    @Test
    void aSwitchWithSpacesAroundItFails() {
        assertThat(PropertyNamesCheck.checkValue("fencing.compaction.enabled", "java.lang.Boolean", "true "))
                .contains("without spaces around it");
        assertThat(PropertyNamesCheck.checkValue("fencing.compaction.enabled", "java.lang.Boolean", "true")).isNull();
        assertThat(PropertyNamesCheck.checkValue("fencing.acquire-timeout", "java.time.Duration", " 5s ")).isNull();
    }

    @Test
    void compactionSettingsWithoutCompactionEnabledAreAWarning(CapturedOutput output) {
        runner.withPropertyValues("fencing.compaction.cron=0 30 3 * * *", "fencing.compaction.idle-for=2d")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("fencing.compaction.cron, fencing.compaction.idle-for are set, but "
                + "fencing.compaction.enabled is not true: no compaction is scheduled");
    }

    @Test
    void compactionSettingsFromEnvironmentVariablesWithoutCompactionEnabledAreAWarningToo(CapturedOutput output) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new SystemEnvironmentPropertySource("env",
                Map.of("FENCING_COMPACTION_CRON", "0 30 3 * * *")));
        ConfigurationPropertySources.attach(environment);
        new PropertyNamesCheck(environment, getClass().getClassLoader())
                .postProcessBeanFactory(new DefaultListableBeanFactory());
        assertThat(output).contains("fencing.compaction.cron is set, but fencing.compaction.enabled is not true");
    }

    @Test
    void compactionSettingsWithCompactionEnabledOrNoneAtAllAreNoWarning(CapturedOutput output) {
        runner.withPropertyValues("fencing.compaction.enabled=false").run(context -> assertThat(context)
                .hasNotFailed());
        runner.run(context -> assertThat(context).hasNotFailed());
        assertThat(output).doesNotContain("no compaction is scheduled");
    }

    /** Boot binds nothing from a value given to a group: fencing.issuer=zookeeper left the issuer at none. */
    @Test
    void aValueForAGroupOfPropertiesFailsStartupNamingTheTypeProperty() {
        assertThat(PropertyNamesCheck.knownNames(getClass().getClassLoader()))
                .doesNotContain("fencing.issuer", "fencing.store", "fencing.store.jdbc");
        runner.withPropertyValues("fencing.issuer=zookeeper", "fencing.store=in-memory", "fencing.store.jdbc=on")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .isInstanceOf(FencingConfigurationException.class)
                        .hasMessageContaining("'fencing.issuer' names a group of properties (fencing.issuer.*), which "
                                + "takes no value of its own: did you mean 'fencing.issuer.type'?")
                        .hasMessageContaining("'fencing.store' names a group of properties (fencing.store.*), which "
                                + "takes no value of its own: did you mean 'fencing.store.type'?")
                        .hasMessageContaining("'fencing.store.jdbc' names a group of properties"));
    }

    @Test
    void aKeyBelowAPlainPropertyIsUnknown() {
        runner.withPropertyValues("fencing.enabled.really=true")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasMessageContaining("'fencing.enabled.really'"));
    }
}

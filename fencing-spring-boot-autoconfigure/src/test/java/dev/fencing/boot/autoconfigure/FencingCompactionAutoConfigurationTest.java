package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.CompactionRun;
import dev.fencing.retention.FenceCompaction;
import dev.fencing.retention.IssuerCompaction;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The scheduled compaction: off by default, every mistake refused at startup, runs with what was configured. */
@ExtendWith(OutputCaptureExtension.class)
class FencingCompactionAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingCompactionAutoConfiguration.class));

    @Test
    void offByDefault() {
        runner.withUserConfiguration(CompactingStoreConfig.class, FloorsIssuerConfig.class)
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(CompactionRun.class)
                        .doesNotHaveBean(FencingCompactionSchedule.class));
    }

    /** A bare number is days: {@code idle-for=30} was 30 ms, and folded resources in use (a trial). */
    @Test
    void anIdleForWithoutAUnitIsDays() {
        runner.withUserConfiguration(CompactingStoreConfig.class, FloorsIssuerConfig.class)
                .withPropertyValues("fencing.compaction.enabled=true", "fencing.compaction.idle-for=30")
                .run(context -> assertThat(context.getBean(FencingCompactionProperties.class).getIdleFor())
                        .isEqualTo(Duration.ofDays(30)));
    }

    @Test
    void runsOnItsScheduleWithTheConfiguredAgeBatchAndIssuer() {
        runner.withUserConfiguration(CompactingStoreConfig.class, FloorsIssuerConfig.class)
                .withBean(SimpleMeterRegistry.class)
                .withPropertyValues("fencing.compaction.enabled=true", "fencing.compaction.idle-for=7d",
                        "fencing.compaction.batch-size=250", "fencing.compaction.interval=20ms",
                        "fencing.compaction.initial-delay=0s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    CompactingStore store = context.getBean(CompactingStore.class);
                    assertThat(store.twoRuns.await(10, TimeUnit.SECONDS)).as("two scheduled runs").isTrue();
                    Call first = store.calls.get(0);
                    assertThat(first.idleFor()).isEqualTo(Duration.ofDays(7));
                    assertThat(first.batchSize()).isEqualTo(250);
                    assertThat(first.issuer()).isSameAs(context.getBean(TokenIssuer.class));
                    SimpleMeterRegistry registry = context.getBean(SimpleMeterRegistry.class);
                    // the second run has begun, so the first one (same thread) has been counted in full
                    assertThat(registry.get("fencing.compaction.runs").tag("outcome", "ok").counter().count())
                            .isGreaterThanOrEqualTo(1);
                    assertThat(registry.get("fencing.compaction.folded").tag("state", "fence").counter().count())
                            .isGreaterThanOrEqualTo(3);
                    FloorsIssuer issuer = context.getBean(FloorsIssuer.class);
                    assertThat(issuer.compactions.get()).isGreaterThanOrEqualTo(1);
                    assertThat(registry.get("fencing.compaction.folded").tag("state", "issuer").counter().count())
                            .isGreaterThanOrEqualTo(5);
                    assertThat(context.getBean(FencingCompactionSchedule.class).isRunning()).isTrue();
                });
    }

    @Test
    void aFailedRunIsCountedAndTheScheduleGoesOn() {
        runner.withUserConfiguration(FloorsIssuerConfig.class)
                .withBean(CompactingStore.class, () -> new CompactingStore(true))
                .withBean(SimpleMeterRegistry.class)
                .withPropertyValues("fencing.compaction.enabled=true", "fencing.compaction.interval=20ms",
                        "fencing.compaction.initial-delay=0s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(CompactingStore.class).twoRuns.await(10, TimeUnit.SECONDS)).isTrue();
                    assertThat(context.getBean(SimpleMeterRegistry.class).get("fencing.compaction.runs")
                            .tag("outcome", "failed").counter().count()).isGreaterThanOrEqualTo(1);
                });
    }

    @Test
    void oneSequenceTokensNeedNoIssuerBean() {
        runner.withUserConfiguration(CompactingStoreConfig.class)
                .withPropertyValues("fencing.compaction.enabled=true", "fencing.compaction.issuer-tokens=one-sequence",
                        "fencing.compaction.interval=20ms", "fencing.compaction.initial-delay=0s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    CompactingStore store = context.getBean(CompactingStore.class);
                    assertThat(store.twoRuns.await(10, TimeUnit.SECONDS)).isTrue();
                    assertThat(store.calls.get(0).issuer()).isSameAs(IssuerFloors.ONE_SEQUENCE);
                });
    }

    @Test
    void aStoreThatCannotCompactFailsAtStartup() {
        runner.withBean(FenceStore.class, InMemoryFenceStoreWithoutCompaction::new)
                .withUserConfiguration(FloorsIssuerConfig.class)
                .withPropertyValues("fencing.compaction.enabled=true")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasRootCauseInstanceOf(FencingConfigurationException.class)
                        .rootCause().hasMessageContaining("cannot compact")
                        .hasMessageContaining(InMemoryFenceStoreWithoutCompaction.class.getName()));
    }

    @Test
    void anIssuerWithoutFloorsFailsAtStartupAndSaysWhatToSet() {
        runner.withUserConfiguration(CompactingStoreConfig.class)
                .withBean(TokenIssuer.class, () -> (resource, timeout) -> {
                    throw new UnsupportedOperationException();
                })
                .withPropertyValues("fencing.compaction.enabled=true")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasRootCauseInstanceOf(FencingConfigurationException.class)
                        .rootCause().hasMessageContaining("cannot issue above a family floor")
                        .hasMessageContaining("fencing.compaction.issuer-tokens=one-sequence"));
    }

    @Test
    void noIssuerAndNoDeclarationFailsAtStartup() {
        runner.withUserConfiguration(CompactingStoreConfig.class)
                .withPropertyValues("fencing.compaction.enabled=true")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .rootCause().hasMessageContaining("no single TokenIssuer bean"));
    }

    @Test
    void badValuesFailAtStartupNamingTheProperty() {
        ApplicationContextRunner enabled = runner.withUserConfiguration(CompactingStoreConfig.class,
                FloorsIssuerConfig.class).withPropertyValues("fencing.compaction.enabled=true");
        enabled.withPropertyValues("fencing.compaction.cron=every night")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("fencing.compaction.cron 'every night'"));
        enabled.withPropertyValues("fencing.compaction.idle-for=-1d")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("fencing.compaction.idle-for: ").hasMessageContaining("PT-24H"));
        enabled.withPropertyValues("fencing.compaction.batch-size=0")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("fencing.compaction.batch-size: ")
                        .hasMessageContaining("batch size must be at least 1, was 0"));
        enabled.withPropertyValues("fencing.compaction.interval=0s")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("fencing.compaction.interval must be positive"));
    }

    @Test
    void aCronExpressionWithAnExplicitIntervalOrInitialDelayFailsStartupNamingBoth() {
        ApplicationContextRunner cron = runner.withUserConfiguration(CompactingStoreConfig.class,
                FloorsIssuerConfig.class).withPropertyValues("fencing.compaction.enabled=true",
                "fencing.compaction.cron=0 30 3 * * *");
        cron.withPropertyValues("fencing.compaction.interval=1h") // the default value, set explicitly
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("fencing.compaction.cron ('0 30 3 * * *') and "
                                + "fencing.compaction.interval are both set")
                        .hasMessageNotContaining("initial-delay"));
        cron.withPropertyValues("fencing.compaction.initialDelay=0s") // a relaxed name
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("fencing.compaction.cron ('0 30 3 * * *') and "
                                + "fencing.compaction.initial-delay are both set"));
        cron.withPropertyValues("fencing.compaction.interval=2h", "fencing.compaction.initial-delay=1m")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("fencing.compaction.interval and fencing.compaction.initial-delay "
                                + "are both set"));
        cron.withPropertyValues("fencing.compaction.cron=", "fencing.compaction.interval=2h")
                .run(context -> assertThat(context).hasNotFailed()
                        .getBean(FencingCompactionSchedule.class).hasToString("every PT2H after PT5M"));
    }

    @Test
    void aCronExpressionIsAcceptedAndTheScheduleLoggedAtStartup(CapturedOutput output) {
        runner.withUserConfiguration(CompactingStoreConfig.class, FloorsIssuerConfig.class)
                .withPropertyValues("fencing.compaction.enabled=true", "fencing.compaction.cron=0 30 3 * * *")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(FencingCompactionSchedule.class)).hasToString("cron '0 30 3 * * *'");
                    assertThat(context.getBean(CompactingStore.class).calls).isEmpty();
                });
        assertThat(output).containsPattern("Fence compaction scheduled on cron '0 30 3 \\* \\* \\*' \\(next run "
                + "\\d{4}-\\d\\d-\\d\\dT03:30.*\\): resources idle for over 30d are folded into their family's floor, "
                + "1000 per transaction");
        assertThat(FencingCompactionSchedule.readable(Duration.ofDays(30))).isEqualTo("30d");
        assertThat(FencingCompactionSchedule.readable(Duration.ofHours(1))).isEqualTo("1h");
        assertThat(FencingCompactionSchedule.readable(Duration.ofSeconds(90))).isEqualTo("90s");
        assertThat(FencingCompactionSchedule.readable(Duration.ofMillis(1500))).isEqualTo("PT1.5S");
    }

    record Call(Duration idleFor, int batchSize, IssuerFloors issuer) {
    }

    /** A store that records each compaction asked of it (folding three resources each time, or failing). */
    static final class CompactingStore implements FenceStore, FenceCompaction {

        final List<Call> calls = new CopyOnWriteArrayList<>();
        final CountDownLatch twoRuns = new CountDownLatch(2);
        private final boolean failing;

        CompactingStore(boolean failing) {
            this.failing = failing;
        }

        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) {
            throw new UnsupportedOperationException("not fenced in this test");
        }

        @Override
        public CompactionResult compact(Duration idleFor, int batchSize, IssuerFloors issuer) {
            calls.add(new Call(idleFor, batchSize, issuer));
            twoRuns.countDown();
            if (failing) {
                throw new IllegalStateException("database down");
            }
            return new CompactionResult(3, 1, 1);
        }

        @Override
        public OptionalLong familyFloor(String family) {
            return OptionalLong.empty();
        }
    }

    /** A store that fences but cannot compact. */
    static final class InMemoryFenceStoreWithoutCompaction implements FenceStore {
        private final InMemoryFenceStore delegate = new InMemoryFenceStore();

        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
            return delegate.fence(resource, token, write);
        }
    }

    /** An issuer that can raise family floors and keeps state per resource (never asked to acquire here). */
    static final class FloorsIssuer implements TokenIssuer, IssuerFloors, IssuerCompaction {

        final java.util.concurrent.atomic.AtomicInteger compactions = new java.util.concurrent.atomic.AtomicInteger();

        @Override
        public CompactionResult compact(Duration idleFor, int batchSize) {
            compactions.incrementAndGet();
            return new CompactionResult(5, 1, 1);
        }

        @Override
        public Lease acquire(String resource, Duration timeout) {
            throw new UnsupportedOperationException("not acquired in this test");
        }

        @Override
        public void raiseFamilyFloor(String family, long floor) {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CompactingStoreConfig {
        @Bean
        CompactingStore compactingStore() {
            return new CompactingStore(false);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class FloorsIssuerConfig {
        @Bean
        FloorsIssuer floorsIssuer() {
            return new FloorsIssuer();
        }
    }

    /**
     * With one-sequence tokens there is no floor to raise, but an issuer that can say what it handed out still goes
     * to the compaction, which then leaves a max_seen above every issued token unfolded (a forged one).
     */
    @Test
    void oneSequenceFloorsKeepWhatTheIssuerHandedOut() {
        IssuerCounterCheckTest.OneSequence issuer = new IssuerCounterCheckTest.OneSequence(41);
        IssuerFloors floors = FencingCompactionAutoConfiguration.floors(issuer,
                FencingCompactionProperties.IssuerTokens.ONE_SEQUENCE);
        assertThat(floors).isInstanceOf(dev.fencing.recovery.IssuedTokens.class);
        assertThat(((dev.fencing.recovery.IssuedTokens) floors).highestIssued("orders:1")).isEqualTo(41);
        assertThat(((dev.fencing.recovery.IssuedTokens) floors).oneSequence()).isTrue();
        floors.raiseFamilyFloor("orders", 500);
        assertThat(FencingCompactionAutoConfiguration.floors(null,
                FencingCompactionProperties.IssuerTokens.ONE_SEQUENCE)).isSameAs(IssuerFloors.ONE_SEQUENCE);
    }

    /**
     * One-sequence declared beside an issuer that counts per resource would leave its counters below the family
     * floors compaction raises: the folded resource's next tokens would all be refused as stale.
     */
    @Test
    void oneSequenceBesideAPerResourceIssuerFailsAtStartup() {
        dev.fencing.issuer.InMemoryTokenIssuer perResource = new dev.fencing.issuer.InMemoryTokenIssuer();
        assertThatThrownBy(() -> FencingCompactionAutoConfiguration.floors(perResource,
                FencingCompactionProperties.IssuerTokens.ONE_SEQUENCE))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("fencing.compaction.issuer-tokens=one-sequence")
                .hasMessageContaining(dev.fencing.issuer.InMemoryTokenIssuer.class.getName())
                .hasMessageContaining("counter per resource");
        runner.withUserConfiguration(CompactingStoreConfig.class)
                .withBean(TokenIssuer.class, dev.fencing.issuer.InMemoryTokenIssuer::new)
                .withPropertyValues("fencing.compaction.enabled=true", "fencing.compaction.issuer-tokens=one-sequence")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasRootCauseInstanceOf(FencingConfigurationException.class)
                        .rootCause().hasMessageContaining("remove fencing.compaction.issuer-tokens"));
    }
}

package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.CompactionMetrics;
import dev.fencing.retention.CompactionRun;
import dev.fencing.retention.FenceCompaction;
import dev.fencing.retention.IssuerCompaction;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.store.FenceStore;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/**
 * The scheduled compaction of the fence state ({@code fencing.compaction.enabled=true}): a {@link CompactionRun} over
 * the application's {@link FenceStore} (and the issuer's own table when it keeps one, {@link IssuerCompaction}: the
 * JDBC lease), run by a thread of its own ({@link FencingCompactionSchedule}). Every
 * mistake fails at startup: a store that cannot compact, an issuer that cannot keep its tokens above a family floor
 * (unless {@code fencing.compaction.issuer-tokens=one-sequence} says the tokens come from one sequence; said beside
 * an issuer bean that keeps a counter per resource, that fails too), a
 * non-positive age, interval or batch size, a malformed cron expression, a cron expression set together with an
 * interval or initial delay.
 */
@AutoConfiguration(after = {FencingAutoConfiguration.class, FencingJdbcAutoConfiguration.class,
        FencingZooKeeperAutoConfiguration.class, FencingEtcdAutoConfiguration.class}, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration"})
@ConditionalOnClass(CompactionRun.class)
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "fencing.compaction.enabled")
@EnableConfigurationProperties(FencingCompactionProperties.class)
public class FencingCompactionAutoConfiguration {

    private static final String PREFIX = "fencing.compaction";

    @Bean
    @ConditionalOnMissingBean
    CompactionRun fencingCompactionRun(ObjectProvider<FenceStore> stores, ObjectProvider<TokenIssuer> issuers,
                                       FencingCompactionProperties properties, ObjectProvider<MeterRegistry> registry) {
        FenceStore store = stores.getIfUnique();
        if (store == null) {
            throw new FencingConfigurationException("fencing.compaction.enabled=true, but the application has no "
                    + "single FenceStore bean to compact; configure the fence store (fencing.store.type) or turn "
                    + "compaction off");
        }
        if (!(store instanceof FenceCompaction compaction)) {
            throw new FencingConfigurationException("fencing.compaction.enabled=true, but the FenceStore bean ("
                    + store.getClass().getName() + ") cannot compact (it does not implement FenceCompaction); "
                    + "the JDBC and in-memory stores can");
        }
        TokenIssuer issuer = issuers.getIfUnique();
        IssuerFloors floors = floors(issuer, properties.getIssuerTokens());
        try {
            return new CompactionRun(compaction, floors, issuer instanceof IssuerCompaction state ? state : null,
                    properties.getIdleFor(), properties.getBatchSize(), new CompactionMetrics(registry.getIfUnique()));
        } catch (IllegalArgumentException | NullPointerException e) {
            String property = String.valueOf(e.getMessage()).contains("batch size") ? "fencing.compaction.batch-size"
                    : "fencing.compaction.idle-for";
            throw new FencingConfigurationException(property + ": " + e.getMessage());
        }
    }

    @Bean
    FencingCompactionSchedule fencingCompactionSchedule(CompactionRun run, FencingCompactionProperties properties,
                                                        Environment environment) {
        requireOneSchedule(properties, environment);
        return new FencingCompactionSchedule(run, properties);
    }

    /**
     * A cron expression decides every run by itself: an interval or initial delay set beside it (in any property
     * source, relaxed names included; their defaults do not count) would be silently ignored, so it fails startup.
     *
     * @throws FencingConfigurationException naming the cron property and each one set beside it
     */
    static void requireOneSchedule(FencingCompactionProperties properties, Environment environment) {
        String cron = properties.getCron();
        if (cron == null || cron.isBlank()) {
            return;
        }
        Binder binder = Binder.get(environment);
        List<String> alsoSet = Stream.of(PREFIX + ".interval", PREFIX + ".initial-delay")
                .filter(name -> binder.bind(name, Duration.class).isBound())
                .toList();
        if (!alsoSet.isEmpty()) {
            throw new FencingConfigurationException(PREFIX + ".cron ('" + cron + "') and " + String.join(" and ",
                    alsoSet) + " are both set, but a cron expression decides every run by itself and the other would "
                    + "be ignored: remove " + String.join(" and ", alsoSet) + " to run on the cron expression, or "
                    + PREFIX + ".cron to run a fixed delay apart");
        }
    }

    static IssuerFloors floors(TokenIssuer issuer, FencingCompactionProperties.IssuerTokens tokens) {
        if (tokens == FencingCompactionProperties.IssuerTokens.ONE_SEQUENCE) {
            if (issuer instanceof IssuedTokens issued && !issued.oneSequence()) {
                // its counters would never be raised to a family's floor: every folded resource would refuse its
                // next tokens as stale until its own counter passed the floor
                throw new FencingConfigurationException("fencing.compaction.issuer-tokens=one-sequence, but the "
                        + "TokenIssuer bean (" + issuer.getClass().getName() + ") keeps a counter per resource "
                        + "(its IssuedTokens.oneSequence() is false): with one-sequence no family floor is raised "
                        + "in it, and a folded resource would refuse its next tokens as stale until its counter "
                        + "passed the floor; remove fencing.compaction.issuer-tokens (the issuer bean's floors are "
                        + "used by default), or, if its tokens do come from one sequence for every resource, have "
                        + "its oneSequence() answer true");
            }
            // no floor to raise; an issuer that can say what it handed out still lets the compaction leave a
            // max_seen above every issued token unfolded
            return issuer instanceof IssuedTokens issued ? new OneSequence(issued) : IssuerFloors.ONE_SEQUENCE;
        }
        if (issuer instanceof IssuerFloors floors) {
            return floors;
        }
        String what = issuer == null ? "the application has no single TokenIssuer bean"
                : "the TokenIssuer bean (" + issuer.getClass().getName() + ") cannot issue above a family floor "
                + "(it does not implement IssuerFloors)";
        throw new FencingConfigurationException("fencing.compaction.enabled=true, but " + what + ": a folded "
                + "resource would refuse its next token. If the tokens come from one sequence for every resource "
                + "(ZooKeeper czxids, etcd revisions, issued here or by another service), set "
                + "fencing.compaction.issuer-tokens=one-sequence; otherwise leave compaction off");
    }

    /** Floors of an issuer with one sequence (none to raise), with what it handed out. */
    record OneSequence(IssuedTokens issued) implements IssuerFloors, IssuedTokens {

        @Override
        public void raiseFamilyFloor(String family, long floor) {
            IssuerFloors.checkArguments("compaction's one-sequence floors", family, floor);
        }

        @Override
        public long highestIssued(String resource) {
            return issued.highestIssued(resource);
        }

        @Override
        public boolean isHeld(String resource) {
            return issued.isHeld(resource);
        }

        @Override
        public boolean oneSequence() {
            return issued.oneSequence();
        }
    }
}

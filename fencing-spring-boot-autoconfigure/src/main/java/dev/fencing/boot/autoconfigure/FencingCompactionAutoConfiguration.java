package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.CompactionMetrics;
import dev.fencing.retention.CompactionRun;
import dev.fencing.retention.FenceCompaction;
import dev.fencing.retention.IssuerCompaction;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.store.FenceStore;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The scheduled compaction of the fence state ({@code fencing.compaction.enabled=true}): a {@link CompactionRun} over
 * the application's {@link FenceStore} (and the issuer's own table when it keeps one, {@link IssuerCompaction}: the
 * JDBC lease), run by a thread of its own ({@link FencingCompactionSchedule}). Every
 * mistake fails at startup: a store that cannot compact, an issuer that cannot keep its tokens above a family floor
 * (unless {@code fencing.compaction.issuer-tokens=one-sequence} says the tokens come from one sequence), a
 * non-positive age, interval or batch size, a malformed cron expression.
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
            throw new FencingConfigurationException("fencing.compaction.idle-for / batch-size: " + e.getMessage());
        }
    }

    @Bean
    FencingCompactionSchedule fencingCompactionSchedule(CompactionRun run, FencingCompactionProperties properties) {
        return new FencingCompactionSchedule(run, properties);
    }

    static IssuerFloors floors(TokenIssuer issuer, FencingCompactionProperties.IssuerTokens tokens) {
        if (tokens == FencingCompactionProperties.IssuerTokens.ONE_SEQUENCE) {
            return IssuerFloors.ONE_SEQUENCE;
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
}

package dev.fencing.boot.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.convert.DurationUnit;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

/**
 * The scheduled compaction of the fence state ({@code fencing.compaction.*}), off by default: resources (per-entity
 * keys such as {@code accounts:42}) that accepted no token for {@link #getIdleFor() idle-for} are folded into their
 * family's floor. Runs every {@link #getInterval() interval}, or on a {@link #getCron() cron} expression when one is
 * set (an interval or initial delay set beside it fails startup).
 */
@ConfigurationProperties("fencing.compaction")
public class FencingCompactionProperties {

    /** Whether the starter compacts the fence state on a schedule. */
    private boolean enabled;

    /**
     * How long a resource must go without an accepted token before it is folded into its family's floor; a number
     * without a unit is days (30 is 30d, not Boot's default of milliseconds, which folded live resources).
     */
    @DurationUnit(ChronoUnit.DAYS)
    private Duration idleFor = Duration.ofDays(30);

    /** Resources folded per transaction. */
    private int batchSize = 1000;

    /** Time between the end of one run and the start of the next; setting it together with cron fails startup. */
    private Duration interval = Duration.ofHours(1);

    /** Time from startup to the first run; setting it together with cron fails startup. */
    private Duration initialDelay = Duration.ofMinutes(5);

    /** A Spring cron expression (six fields, such as 0 30 3 * * *) for the runs, in the server's time zone. */
    private String cron;

    /** Where the tokens come from, which decides how floors are kept issuable. */
    private IssuerTokens issuerTokens = IssuerTokens.ISSUER_BEAN;

    /** Where the tokens checked by this application's fence store come from. */
    public enum IssuerTokens {
        /**
         * The application's {@code TokenIssuer} bean, which must be able to issue above a family floor
         * ({@code IssuerFloors}: the JDBC lease, ZooKeeper, etcd, Redisson, in-memory issuers are).
         */
        ISSUER_BEAN,
        /**
         * One sequence for every resource (ZooKeeper czxids, etcd revisions), possibly issued by another service:
         * every new token is above every earlier one, so no issuer floor is raised.
         */
        ONE_SEQUENCE
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Duration getIdleFor() {
        return idleFor;
    }

    public void setIdleFor(Duration idleFor) {
        this.idleFor = idleFor;
    }

    public int getBatchSize() {
        return batchSize;
    }

    public void setBatchSize(int batchSize) {
        this.batchSize = batchSize;
    }

    public Duration getInterval() {
        return interval;
    }

    public void setInterval(Duration interval) {
        this.interval = interval;
    }

    public Duration getInitialDelay() {
        return initialDelay;
    }

    public void setInitialDelay(Duration initialDelay) {
        this.initialDelay = initialDelay;
    }

    public String getCron() {
        return cron;
    }

    public void setCron(String cron) {
        this.cron = cron;
    }

    public IssuerTokens getIssuerTokens() {
        return issuerTokens;
    }

    public void setIssuerTokens(IssuerTokens issuerTokens) {
        this.issuerTokens = issuerTokens;
    }
}

package dev.fencing.boot.actuate;

import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.FenceStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * {@code /actuator/fencing}: the configuration in effect (store and table, issuer, acquire timeout, lock timeout) and
 * the {@code fencing.checks} and {@code fencing.acquisitions} counts per resource and outcome, read from the
 * {@link MeterRegistry} on request (nothing is recorded for this endpoint on an accepted call), and the last
 * rejections ({@link FencingRejections}).
 * {@code /actuator/fencing/{resource}}: one resource's counts and, with a {@code JdbcFenceStore}, its committed
 * max_seen. Read-only; exposed like every Boot endpoint ({@code management.endpoints.web.exposure.include}).
 */
@Endpoint(id = "fencing")
public class FencingEndpoint {

    private final FenceStore store;
    private final TokenIssuer issuer;
    private final Duration acquireTimeout;
    private final MeterRegistry registry;
    private final FencingRejections rejections;

    /**
     * @param store          the application's fence store
     * @param issuer         its token issuer, {@code null} when none
     * @param acquireTimeout how long {@code @Fenced(acquire = true)} waits, {@code null} when unknown
     * @param registry       where the guard's counters are, {@code null} when the application has none
     */
    public FencingEndpoint(FenceStore store, TokenIssuer issuer, Duration acquireTimeout, MeterRegistry registry) {
        this(store, issuer, acquireTimeout, registry, null);
    }

    /** As above, showing the last rejections {@code rejections} recorded ({@code null}: none shown). */
    public FencingEndpoint(FenceStore store, TokenIssuer issuer, Duration acquireTimeout, MeterRegistry registry,
                           FencingRejections rejections) {
        this.rejections = rejections;
        this.store = Objects.requireNonNull(store, "store");
        this.issuer = issuer;
        this.acquireTimeout = acquireTimeout;
        this.registry = registry;
    }

    /** The configuration in effect and the counts per resource and outcome. */
    @ReadOperation
    public Map<String, Object> fencing() {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("store", describe(store));
        result.put("issuer", issuer == null ? Map.of("type", "none") : describe(issuer));
        if (acquireTimeout != null) {
            result.put("acquireTimeout", acquireTimeout.toString());
        }
        result.put("checks", counts(FencingMetrics.CHECKS, null));
        result.put("acquisitions", counts(FencingMetrics.ACQUISITIONS, null));
        if (rejections != null) {
            result.put("rejections", rejections.recent());
        }
        return result;
    }

    /**
     * One resource: a {@code @Fenced} resource name ({@code accounts}) or an effective resource ({@code accounts:42}).
     * Its committed max_seen with a JDBC store (an effective resource has one; a keyed name alone has none), and the
     * counts of the name it is counted under ({@code countedAs}: counters are tagged with the static name only, so
     * {@code accounts:42} shows the counts of {@code accounts}).
     */
    @ReadOperation
    public Map<String, Object> resource(@Selector String resource) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("resource", resource);
        if (JdbcParts.isJdbc(store)) {
            OptionalLong maxSeen = JdbcParts.maxSeen(store, resource);
            result.put("maxSeen", maxSeen.isPresent() ? maxSeen.getAsLong() : null);
        }
        String countedAs = countedAs(resource);
        result.put("countedAs", countedAs);
        result.put("checks", counts(FencingMetrics.CHECKS, countedAs).getOrDefault(countedAs, Map.of()));
        result.put("acquisitions", counts(FencingMetrics.ACQUISITIONS, countedAs).getOrDefault(countedAs, Map.of()));
        return result;
    }

    /** The longest of {@code resource} and its prefixes before a {@code ':'} that has counters; else itself. */
    private String countedAs(String resource) {
        String candidate = resource;
        while (true) {
            if (registry != null && !registry.find(FencingMetrics.CHECKS).tag("resource", candidate).counters().isEmpty()
                    || registry != null && !registry.find(FencingMetrics.ACQUISITIONS).tag("resource", candidate)
                    .counters().isEmpty()) {
                return candidate;
            }
            int colon = candidate.lastIndexOf(':');
            if (colon <= 0) {
                return resource;
            }
            candidate = candidate.substring(0, colon);
        }
    }

    /** resource → outcome → count, summed over the {@code exception} tag. */
    private Map<String, Map<String, Long>> counts(String name, String onlyResource) {
        Map<String, Map<String, Long>> counts = new TreeMap<>();
        if (registry == null) {
            return counts;
        }
        var search = onlyResource == null ? registry.find(name) : registry.find(name).tag("resource", onlyResource);
        for (Counter counter : search.counters()) {
            String resource = counter.getId().getTag("resource");
            String outcome = counter.getId().getTag("outcome");
            if (resource == null || outcome == null) {
                continue;
            }
            counts.computeIfAbsent(resource, r -> new TreeMap<>())
                    .merge(outcome, (long) counter.count(), Long::sum);
        }
        return counts;
    }

    static Map<String, Object> describe(FenceStore store) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("type", store.getClass().getSimpleName());
        if (JdbcParts.isJdbc(store)) {
            JdbcParts.describe(store, details);
        }
        return details;
    }

    static Map<String, Object> describe(TokenIssuer issuer) {
        Map<String, Object> details = new LinkedHashMap<>();
        if (issuer instanceof OffsetTokenIssuer offset) { // a migration: the issuer behind it, and the base
            details.put("offsetBase", offset.base());
            issuer = offset.delegate();
        }
        details.put("type", issuer.getClass().getSimpleName());
        if (JdbcParts.isJdbc(issuer)) {
            JdbcParts.describe(issuer, details);
        }
        return details;
    }
}

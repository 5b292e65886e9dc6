package dev.fencing.boot.actuate;

import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.FenceStore;
import dev.fencing.store.RoutingFenceStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import dev.fencing.FencingConfigurationException;
import dev.fencing.mode.FenceMode;
import dev.fencing.token.FencingToken;
import dev.fencing.mode.FenceModes;
import dev.fencing.mode.ObservedCalls;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

import java.security.Principal;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * {@code /actuator/fencing}: the configuration in effect (store and table, issuer, acquire timeout, lock timeout) and
 * the {@code fencing.checks} and {@code fencing.acquisitions} counts per resource and outcome, and the
 * {@code fencing.leases.unchecked} count per resource ({@code uncheckedLeases}), read from the {@link MeterRegistry} on
 * request (nothing is recorded for this endpoint on an accepted call), and the last
 * rejections ({@link FencingRejections}); with {@link FenceModes}, the mode of each resource and the report of observed
 * calls ({@code observed}: per method, its checks per outcome and when it last ran; {@code withoutToken}: the methods
 * that ran without a token, the code paths to fix before enforcing).
 * {@code POST /actuator/fencing} with {@code mode} ({@code enforce} or {@code observe}) and optionally {@code resource}
 * (none: the default of every resource without its own) switches a mode without a restart, logged with the caller;
 * switching to observe needs {@code fencing.admin.enabled=true}, and is refused with a store checking at commit.
 * {@code /actuator/fencing/{resource}}: one resource's counts and, with a {@code JdbcFenceStore}, its committed
 * max_seen. Read-only; exposed like every Boot endpoint ({@code management.endpoints.web.exposure.include}).
 */
@Endpoint(id = "fencing")
public class FencingEndpoint {

    /** A {@link FenceStore}, or a reactive application's {@code ReactiveFenceStore}. */
    private final Object store;
    private final TokenIssuer issuer;
    private final Duration acquireTimeout;
    private final MeterRegistry registry;
    private final FencingRejections rejections;
    private final FenceModes modes;
    private final boolean observeAllowed;

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
        this(store, issuer, acquireTimeout, registry, rejections, null, false);
    }

    /**
     * As above, with the modes the guard checks in ({@code null}: none shown, none switched) and whether a caller may
     * switch a resource to observe ({@code fencing.admin.enabled}; switching to enforce is always allowed).
     */
    public FencingEndpoint(FenceStore store, TokenIssuer issuer, Duration acquireTimeout, MeterRegistry registry,
                           FencingRejections rejections, FenceModes modes, boolean observeAllowed) {
        this((Object) store, issuer, acquireTimeout, registry, rejections, modes, observeAllowed);
    }

    /**
     * As above, for a reactive application whose fence store is a {@code ReactiveFenceStore} (fencing-reactor), with
     * no blocking one: its counts, modes and rejections as on the blocking stack; no committed max_seen.
     */
    public static FencingEndpoint reactive(Object reactiveStore, TokenIssuer issuer, Duration acquireTimeout,
                                           MeterRegistry registry, FencingRejections rejections, FenceModes modes,
                                           boolean observeAllowed) {
        return new FencingEndpoint(reactiveStore, issuer, acquireTimeout, registry, rejections, modes,
                observeAllowed);
    }

    private FencingEndpoint(Object store, TokenIssuer issuer, Duration acquireTimeout, MeterRegistry registry,
                            FencingRejections rejections, FenceModes modes, boolean observeAllowed) {
        this.modes = modes;
        this.observeAllowed = observeAllowed;
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
        result.put("uncheckedLeases", uncheckedLeases(null));
        if (rejections != null) {
            result.put("rejections", rejections.recent());
        }
        if (modes != null) {
            result.put("modes", modes());
            result.put("observedChecks", counts(FencingMetrics.CHECKS, null, "false"));
            result.put("observed", modes.observed().calls());
            result.put("withoutToken", modes.observed().withoutToken().stream()
                    .map(ObservedCalls.ObservedCall::operation).toList());
        }
        return result;
    }

    /** The modes the application's fence points follow, {@code null} when unknown. */
    FenceModes fenceModes() {
        return modes;
    }

    private Map<String, Object> modes() {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("default", modes.defaultMode().value());
        Map<String, String> resources = new TreeMap<>();
        modes.resources().forEach((resource, mode) -> resources.put(resource, mode.value()));
        result.put("resources", resources);
        return result;
    }

    /**
     * Switches the mode of {@code resource} ({@code null}: the default of every resource without its own) to
     * {@code mode}, logged at WARNING with the caller. Answers 200 with the modes now in effect, or 400 with
     * {@code error} saying why nothing changed: the mode is unknown, observe is not allowed here
     * ({@code fencing.admin.enabled}), or the fence of the resource cannot observe (a store checking at commit, a
     * reactive point).
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> switchMode(@Nullable String resource, @Nullable String mode,
                                                               SecurityContext security) {
        if (modes == null) {
            return refused(resource, "Fencing is not enabled in this application: there are no fence modes to switch");
        }
        if (mode == null) {
            // without the admin extension this is the only write here: say what the body lacks and what is off
            return refused(resource, "POST /actuator/fencing takes {\"mode\": \"enforce\" or \"observe\"} (with "
                    + "\"resource\" for one resource); the floor raise after a restore ({\"afterRestore\": true}) and "
                    + "POST /actuator/fencing/{resource} (lowering a forged max_seen) need fencing.admin.enabled=true "
                    + "and a secured endpoint");
        }
        FenceMode target;
        try {
            target = FenceMode.parse(mode, "the 'mode' of POST /actuator/fencing");
        } catch (FencingConfigurationException e) {
            return refused(resource, e.getMessage());
        }
        if (target == FenceMode.OBSERVE && !observeAllowed) {
            return refused(resource, "Switching to observe lets refused writes run, so it needs "
                    + "fencing.admin.enabled=true (and a secured endpoint); switching to enforce is always allowed");
        }
        Principal principal = security == null ? null : security.getPrincipal();
        String who = principal == null ? "actuator (unauthenticated)" : "actuator user '" + principal.getName() + "'";
        try {
            modes.set(resource == null || resource.isBlank() ? null : resource, target, who);
        } catch (FencingConfigurationException e) {
            return refused(resource, e.getMessage());
        }
        Map<String, Object> result = modes();
        result.put("actor", who);
        // a rollout trial switched one instance and read the answer as the fleet's
        result.put("scope", "this instance only: POST the switch to every instance, and set the property for "
                + "instances started later");
        return new WebEndpointResponse<>(result, WebEndpointResponse.STATUS_OK);
    }

    private static WebEndpointResponse<Map<String, Object>> refused(String resource, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("resource", resource);
        body.put("error", message);
        return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_BAD_REQUEST);
    }

    /**
     * One resource: a {@code @Fenced} resource name ({@code accounts}) or an effective resource ({@code accounts:42}).
     * Its committed max_seen with a JDBC store (an effective resource has one; a keyed name alone has none), its
     * family's floor with a store that compacts (what a resource without max_seen is judged against), and the
     * counts of the name it is counted under ({@code countedAs}: counters are tagged with the static name only, so
     * {@code accounts:42} shows the counts of {@code accounts}). When the store cannot be read (the database down, the
     * table gone) its part is replaced by {@code storeError}, the reason, and the counts are still shown. Behind a
     * {@link RoutingFenceStore}, {@code route} names the route whose store answered ({@code (fallback)} for none).
     */
    @ReadOperation
    public Map<String, Object> resource(@Selector String resource) {
        for (int i = 0; i < resource.length(); i++) {
            if (Character.isISOControl(resource.charAt(i))) {
                throw new InvalidEndpointRequestException("resource '" + FencingToken.printable(resource)
                        + "' contains a control character "
                        + "at index " + i + ": no token names such a resource (a key ending in U+001F is a family's "
                        + "floor row: ask for a resource of the family, whose answer shows familyFloor)",
                        "a resource has no control characters");
            }
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("resource", resource);
        String route = null;
        try {
            // behind a routing store, the store of the resource's route (or a storeError naming the routes)
            Object judging = store;
            while (judging instanceof RoutingFenceStore routing) {
                if (!result.containsKey("route")) { // the outermost route, as the health names it
                    String routed = routing.routeOf(resource);
                    route = routed != null ? routed : routing.fallback() != null ? "(fallback)" : null;
                    result.put("route", route);
                }
                judging = routing.storeFor(resource);
            }
            if (judging instanceof FenceStore blocking && JdbcParts.isJdbc(blocking)) {
                OptionalLong maxSeen = JdbcParts.maxSeen(blocking, resource);
                result.put("maxSeen", maxSeen.isPresent() ? maxSeen.getAsLong() : null);
            }
            String family = dev.fencing.retention.ResourceFamily.of(resource);
            if (family != null && judging instanceof dev.fencing.retention.FenceCompaction compaction) {
                // a folded resource has no max_seen of its own: it is judged against its family's floor
                OptionalLong floor = compaction.familyFloor(family);
                result.put("familyFloor", floor.isPresent() ? floor.getAsLong() : null);
            }
        } catch (RuntimeException e) {
            // the counts below are still worth showing: say why the store's part is missing, as the health does
            result.put("storeError", (route == null ? "fence store: " : "fence store of route '" + route + "': ")
                    + FencingHealthIndicator.message(e));
        }
        String countedAs = countedAs(resource);
        result.put("countedAs", countedAs);
        result.put("checks", counts(FencingMetrics.CHECKS, countedAs).getOrDefault(countedAs, Map.of()));
        if (modes != null) {
            result.put("mode", modes.mode(countedAs).value());
            result.put("observedChecks", counts(FencingMetrics.CHECKS, countedAs, "false")
                    .getOrDefault(countedAs, Map.of()));
        }
        result.put("acquisitions", counts(FencingMetrics.ACQUISITIONS, countedAs).getOrDefault(countedAs, Map.of()));
        result.put("uncheckedLeases", uncheckedLeases(countedAs).getOrDefault(countedAs, 0L));
        return result;
    }

    /** The longest of {@code resource} and its prefixes before a {@code ':'} that has counters; else itself. */
    private String countedAs(String resource) {
        String candidate = resource;
        while (true) {
            if (registry != null && !registry.find(FencingMetrics.CHECKS).tag("resource", candidate)
                    .counters().isEmpty()
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

    /** resource → outcome → count, summed over the {@code exception} and {@code enforced} tags. */
    private Map<String, Map<String, Long>> counts(String name, String onlyResource) {
        return counts(name, onlyResource, null);
    }

    /** resource → outcome → count of the counters whose {@code enforced} tag is {@code enforced} (null: any). */
    private Map<String, Map<String, Long>> counts(String name, String onlyResource, String enforced) {
        Map<String, Map<String, Long>> counts = new TreeMap<>();
        if (registry == null) {
            return counts;
        }
        var search = onlyResource == null ? registry.find(name) : registry.find(name).tag("resource", onlyResource);
        if (enforced != null) {
            search = search.tag(FencingMetrics.ENFORCED, enforced);
        }
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

    /**
     * resource → locks given back with no check of their token ({@code fencing.leases.unchecked}); resources with none
     * are left out. The methods are named in the log ({@code dev.fencing.guard.UncheckedLeases}).
     */
    private Map<String, Long> uncheckedLeases(String onlyResource) {
        Map<String, Long> counts = new TreeMap<>();
        if (registry == null) {
            return counts;
        }
        var search = onlyResource == null ? registry.find(FencingMetrics.UNCHECKED_LEASES)
                : registry.find(FencingMetrics.UNCHECKED_LEASES).tag("resource", onlyResource);
        for (Counter counter : search.counters()) {
            String resource = counter.getId().getTag("resource");
            if (resource != null && counter.count() > 0) {
                counts.merge(resource, (long) counter.count(), Long::sum);
            }
        }
        return counts;
    }

    /** Its type and, for a JDBC or R2DBC store, its table and database. */
    static Map<String, Object> describe(Object store) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("type", store.getClass().getSimpleName());
        if (store instanceof FenceStore blocking && JdbcParts.isJdbc(blocking)) {
            JdbcParts.describe(blocking, details);
        } else if (R2dbcParts.isR2dbc(store)) {
            R2dbcParts.describe(store, details);
        } else if (store instanceof RoutingFenceStore routing) {
            Map<String, Object> routes = new LinkedHashMap<>();
            routing.routes().forEach((resource, routed) -> routes.put(resource, describe(routed)));
            details.put("routes", routes);
            if (routing.fallback() != null) {
                details.put("fallback", describe(routing.fallback()));
            }
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
        issuer.describe().forEach(details::putIfAbsent);
        return details;
    }
}

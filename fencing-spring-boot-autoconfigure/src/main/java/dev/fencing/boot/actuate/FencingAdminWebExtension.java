package dev.fencing.boot.actuate;

import dev.fencing.issuer.TokenIssuer;
import dev.fencing.mode.FenceModes;
import dev.fencing.recovery.FloorRaise;
import dev.fencing.recovery.FloorRaiseResult;
import dev.fencing.recovery.MaxSeenReset;
import dev.fencing.recovery.ResetRefusedException;
import dev.fencing.recovery.ResetResult;
import dev.fencing.store.FenceStore;
import dev.fencing.store.TransientFenceFailure;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.Objects;

/**
 * {@code POST /actuator/fencing/{resource}}: the way back after a bad token raised a resource's max_seen, over HTTP.
 * Lowers it to the issuer's highest issued token ({@link MaxSeenReset#toHighestIssued}), or with
 * {@code {"to": N, "override": true}} to an explicit value; {@code "force": true} resets while a lease is held. The
 * authenticated principal is logged as the actor. Registered only with {@code fencing.admin.enabled=true}; answers
 * 200 with old and new max_seen, 400 for bad input and 409 when refused, nothing changed on either.
 * {@code POST /actuator/fencing} ({@link #write}) answers both shapes that path takes: {@code {"mode": ...}} switches a
 * mode as {@link FencingEndpoint#switchMode} does (an extension's operation replaces the endpoint's own on the same
 * path, so this one must serve it), and {@code {"afterRestore": true}} raises the floors after restoring a backup of
 * the fence table ({@link #raiseFloors}).
 */
@EndpointWebExtension(endpoint = FencingEndpoint.class)
public class FencingAdminWebExtension {

    private static final String WRITE = "POST /actuator/fencing";
    private static final String RESET = "POST /actuator/fencing/{resource}";

    private final MaxSeenReset reset;
    private final FloorRaise floorRaise;
    private final FencingEndpoint endpoint;

    /** @param reset the reset this operation runs */
    public FencingAdminWebExtension(MaxSeenReset reset) {
        this(reset, null, null);
    }

    /**
     * @param reset      the reset {@code POST /actuator/fencing/{resource}} runs
     * @param floorRaise the floor raise {@code POST /actuator/fencing} runs, {@code null} for none (answers 404)
     * @param endpoint   the endpoint whose mode switch {@code POST /actuator/fencing} with a {@code mode} runs,
     *                   {@code null} for none (answers 404)
     */
    public FencingAdminWebExtension(MaxSeenReset reset, FloorRaise floorRaise, FencingEndpoint endpoint) {
        this.reset = Objects.requireNonNull(reset, "reset");
        this.floorRaise = floorRaise;
        this.endpoint = endpoint;
    }

    /**
     * The operation for an application's store and issuer: the store's {@link dev.fencing.recovery.FenceAdmin}
     * (the in-memory store itself, or a {@code JdbcFenceAdmin}), the issuer when it can tell what it issued, resets
     * counted in {@code registry} (may be {@code null}).
     *
     * @throws dev.fencing.FencingConfigurationException when the store offers no administration
     */
    public static FencingAdminWebExtension of(FenceStore store, TokenIssuer issuer, MeterRegistry registry,
                                              FencingEndpoint endpoint) {
        return of(store, issuer, registry, endpoint, Map::of);
    }

    /**
     * {@link #of(FenceStore, TokenIssuer, MeterRegistry, FencingEndpoint)}, refusing a reset or floor raise below the
     * highest base of the issuer migrations {@code storedBases} reads (name to base; the starter reads
     * {@code fencing.issuer.offset.table}): that migration's issuer hands out tokens above it, which an application
     * still on the old issuer does not count.
     */
    public static FencingAdminWebExtension of(FenceStore store, TokenIssuer issuer, MeterRegistry registry,
                                              FencingEndpoint endpoint, Supplier<Map<String, Long>> storedBases) {
        FloorRaise raise = FenceAdmins.floorRaise(store, issuer, registry);
        return new FencingAdminWebExtension(FenceAdmins.reset(store, issuer, registry).withStoredBases(storedBases),
                raise == null ? null : raise.withStoredBases(storedBases), endpoint);
    }

    /**
     * {@code POST /actuator/fencing}: with {@code mode} (and optionally {@code resource}), the endpoint's mode switch
     * ({@link FencingEndpoint#switchMode}); with {@code afterRestore} (and optionally {@code atLeast}), the floor
     * raise ({@link #raiseFloors}). Both at once, or neither, answer 400 naming the two shapes; nothing changes.
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> write(@Nullable String mode, @Nullable String resource,
                                                          @Nullable String afterRestore, @Nullable String atLeast,
                                                          SecurityContext security) {
        Boolean restored;
        Long floor;
        try {
            restored = BodyField.flag("afterRestore", afterRestore, WRITE);
            floor = BodyField.number("atLeast", atLeast, WRITE);
        } catch (IllegalArgumentException e) {
            return error(resource, e.getMessage(), WebEndpointResponse.STATUS_BAD_REQUEST);
        }
        return write(mode, resource, restored, floor, security);
    }

    private WebEndpointResponse<Map<String, Object>> write(String mode, String resource, Boolean afterRestore,
                                                           Long atLeast, SecurityContext security) {
        boolean switching = mode != null || resource != null;
        boolean raising = afterRestore != null || atLeast != null;
        if (switching && raising) {
            return error(resource, "POST /actuator/fencing takes either {\"mode\": \"enforce\"|\"observe\"} (and "
                    + "\"resource\") to switch a mode, or {\"afterRestore\": true} (and \"atLeast\") to raise every "
                    + "resource's max_seen after a restore, not both in one request", 400);
        }
        if (!switching) {
            return raiseFloors(afterRestore, atLeast, security);
        }
        if (endpoint == null) {
            return error(resource, "switching modes is not available here", 404);
        }
        if (mode == null) {
            return error(resource, "POST /actuator/fencing with a \"resource\" needs the \"mode\" to switch it to "
                    + "(\"enforce\" or \"observe\")", 400);
        }
        return endpoint.switchMode(resource, mode, security);
    }

    /**
     * {@code POST /actuator/fencing} with {@code {"afterRestore": true}} (and optionally {@code "atLeast": N}): after
     * restoring an older backup of the fence table, raises max_seen of every resource to at least the issuer's
     * highest issued token and {@code N} ({@link FloorRaise}). Answers 200 with how many resources were examined and
     * raised, 400 for bad input (nothing changed), 404 when the store cannot be listed, 409 when a fence row held
     * past the store's lock timeout stopped the run (what it raised before stays raised; run it again).
     */
    public WebEndpointResponse<Map<String, Object>> raiseFloors(@Nullable Boolean afterRestore,
                                                                @Nullable Long atLeast, SecurityContext security) {
        if (floorRaise == null) {
            return error(null, "the floor raise is not available for this fence store", 404);
        }
        if (!Boolean.TRUE.equals(afterRestore)) {
            return error(null, "POST /actuator/fencing switches a mode ({\"mode\": \"enforce\"|\"observe\"}, and "
                    + "\"resource\") or, after a restore, raises every resource's max_seen: send "
                    + "{\"afterRestore\": true} (and \"atLeast\": N for a floor of your own)", 400);
        }
        try {
            // the application's own fence points: an unkeyed resource and a family of keys created after the
            // backup have no row in the restored table, and are raised too
            FenceModes modes = endpoint == null ? null : endpoint.fenceModes();
            Set<String> families = modes == null ? Set.of() : modes.keyed();
            List<String> unkeyed = modes == null ? List.of()
                    : modes.declared().stream().filter(resource -> !families.contains(resource)).toList();
            FloorRaiseResult result = floorRaise.raiseAll(atLeast == null ? 0 : atLeast, actor(security), unkeyed,
                    families);
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("examined", result.examined());
            body.put("raised", result.raised());
            body.put("atLeast", result.atLeast());
            body.put("actor", result.actor());
            return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_OK);
        } catch (IllegalArgumentException e) {
            return error(null, e.getMessage(), WebEndpointResponse.STATUS_BAD_REQUEST);
        } catch (RuntimeException e) {
            if (!(e instanceof TransientFenceFailure)) {
                throw e;
            }
            // a row held past the store's lock timeout stopped the run: say what that means, not a bare 500
            return error(null, "the floor raise stopped: " + e.getMessage() + ". The resources it raised before "
                    + "stay raised (a raise never lowers), the rest are as they were: run it again (it changes "
                    + "nothing already raised)", 409);
        }
    }

    /**
     * Lowers max_seen of {@code resource}; see the class comment for the body and the answers. A body with
     * {@code mode}, {@code afterRestore} or {@code atLeast}, which belong to {@code POST /actuator/fencing}, answers
     * 400 and changes nothing: sent here by mistake (a floor raise meant), it lowered the resource instead.
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> resetFloor(@Selector String resource, @Nullable String to,
                                                               @Nullable String override, @Nullable String force,
                                                               @Nullable String mode, @Nullable String afterRestore,
                                                               @Nullable String atLeast, SecurityContext security) {
        if (mode != null || afterRestore != null || atLeast != null) {
            return error(resource, "POST /actuator/fencing/{resource} lowers the resource's max_seen and takes to, "
                    + "override and force; mode, afterRestore and atLeast belong to POST /actuator/fencing (the mode "
                    + "switch, the floor raise after a restore): nothing changed",
                    WebEndpointResponse.STATUS_BAD_REQUEST);
        }
        Long value;
        boolean overriding;
        boolean forced;
        try {
            value = BodyField.number("to", to, RESET);
            overriding = Boolean.TRUE.equals(BodyField.flag("override", override, RESET));
            forced = Boolean.TRUE.equals(BodyField.flag("force", force, RESET));
        } catch (IllegalArgumentException e) {
            return error(resource, e.getMessage(), WebEndpointResponse.STATUS_BAD_REQUEST);
        }
        String actor = actor(security);
        try {
            ResetResult result = value == null
                    ? reset.toHighestIssued(resource, actor, forced)
                    : reset.toValue(resource, value, actor, overriding, forced);
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("resource", result.resource());
            body.put("previousMaxSeen", result.previous());
            body.put("maxSeen", result.current());
            if (result.highestIssued() >= 0) {
                body.put("highestIssued", result.highestIssued());
            }
            body.put("actor", result.actor());
            return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_OK);
        } catch (ResetRefusedException e) {
            return error(resource, e.getMessage(), 409);
        } catch (IllegalArgumentException e) {
            return error(resource, e.getMessage(), WebEndpointResponse.STATUS_BAD_REQUEST);
        }
    }

    private static String actor(SecurityContext security) {
        Principal principal = security == null ? null : security.getPrincipal();
        return principal == null ? "actuator (unauthenticated)" : "actuator user '" + principal.getName() + "'";
    }

    private static WebEndpointResponse<Map<String, Object>> error(String resource, String message, int status) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (resource != null) {
            body.put("resource", resource);
        }
        body.put("error", message);
        return new WebEndpointResponse<>(body, status);
    }
}

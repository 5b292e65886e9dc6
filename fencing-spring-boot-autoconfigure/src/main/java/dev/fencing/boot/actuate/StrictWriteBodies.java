package dev.fencing.boot.actuate;

import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.OperationType;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvoker;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvokerAdvisor;
import org.springframework.boot.actuate.endpoint.invoke.OperationParameter;
import org.springframework.boot.actuate.endpoint.invoke.OperationParameters;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Refuses a write to {@code /actuator/fencing} whose body holds a key the operation does not take: Spring Boot
 * drops unknown keys, and the operation then ran as if the key were absent ({@code {"mode": "observe", "resourse":
 * "notes"}} switched every resource to observe; {@code {"To": 5}} reset to the issuer's highest token). Answers 400
 * naming each unknown key (and the key probably meant), before the operation runs: nothing changes.
 */
public final class StrictWriteBodies implements OperationInvokerAdvisor {

    private static final EndpointId FENCING = EndpointId.of("fencing");

    /** The admin extension's keys, which the endpoint alone does not take. */
    private static final Set<String> ADMIN_KEYS = Set.of("afterRestore", "atLeast", "to", "override", "force");

    @Override
    public OperationInvoker apply(EndpointId endpointId, OperationType operationType, OperationParameters parameters,
                                  OperationInvoker invoker) {
        if (!FENCING.equals(endpointId) || operationType != OperationType.WRITE) {
            return invoker;
        }
        Set<String> known = parameters.stream().map(OperationParameter::getName).collect(Collectors.toSet());
        return context -> {
            List<String> unknown = context.getArguments().keySet().stream().filter(key -> !known.contains(key))
                    .sorted().map(key -> "'" + key + "'" + meant(key, known)).toList();
            if (unknown.isEmpty()) {
                return invoker.invoke(context);
            }
            boolean admin = context.getArguments().keySet().stream().anyMatch(ADMIN_KEYS::contains);
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("error", "unknown key" + (unknown.size() == 1 ? " " : "s ") + String.join(", ", unknown)
                    + " in the body of this fencing operation (it takes " + known.stream().sorted()
                    .filter(name -> !name.equals("security")).collect(Collectors.joining(", ")) + ")"
                    + (admin ? "; the floor raise after a restore (afterRestore, atLeast) and the reset (to, "
                    + "override, force) need fencing.admin.enabled=true" : "") + ": nothing changed; a misspelt key "
                    + "would otherwise be dropped and the operation run without it");
            return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_BAD_REQUEST);
        };
    }

    /** The known key {@code key} differs from only in case, as a hint; empty when none. */
    private static String meant(String key, Set<String> known) {
        return known.stream().filter(name -> name.toLowerCase(Locale.ROOT).equals(key.toLowerCase(Locale.ROOT)))
                .findFirst().map(name -> " (did you mean '" + name + "'?)").orElse("");
    }
}

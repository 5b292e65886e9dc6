package dev.fencing.boot.autoconfigure;

import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.OperationType;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvoker;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvokerAdvisor;
import org.springframework.boot.actuate.endpoint.invoke.OperationParameter;
import org.springframework.boot.actuate.endpoint.invoke.OperationParameters;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.util.ClassUtils;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Refuses a write to {@code /actuator/fencing} that Spring Boot would run otherwise than asked, before it runs, with
 * a 400 naming what is wrong (nothing changes): a key the operation does not take (Boot drops it, so
 * {@code {"mode": "observe", "resourse": "notes"}} switched every resource to observe); a key given with no value
 * ({@code "resource": ""} or {@code null} did the same); and, on the servlet stack, a key in the query string (Boot
 * lets it replace the body's) or a body key replacing the resource of the path (the log and any path-based rule named
 * another resource than the one changed).
 */
final class StrictWriteBodies implements OperationInvokerAdvisor {

    private static final EndpointId FENCING = EndpointId.of("fencing");

    /** The admin extension's keys, which the endpoint alone does not take. */
    private static final Set<String> ADMIN_KEYS = Set.of("afterRestore", "atLeast", "to", "override", "force");

    private static final boolean SERVLET = ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest",
            StrictWriteBodies.class.getClassLoader()) && ClassUtils.isPresent(
            "org.springframework.web.context.request.RequestContextHolder", StrictWriteBodies.class.getClassLoader());

    @Override
    public OperationInvoker apply(EndpointId endpointId, OperationType operationType, OperationParameters parameters,
                                  OperationInvoker invoker) {
        if (!FENCING.equals(endpointId) || operationType != OperationType.WRITE) {
            return invoker;
        }
        Set<String> known = parameters.stream().map(OperationParameter::getName).collect(Collectors.toSet());
        Set<String> selectors = parameters.stream().filter(p -> p.getAnnotation(Selector.class) != null)
                .map(OperationParameter::getName).collect(Collectors.toSet());
        return context -> {
            String problem = problem(context.getArguments(), known, selectors);
            if (problem == null) {
                return invoker.invoke(context);
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("error", problem + ": nothing changed");
            return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_BAD_REQUEST);
        };
    }

    private static String problem(Map<String, Object> arguments, Set<String> known, Set<String> selectors) {
        List<String> unknown = arguments.keySet().stream().filter(key -> !known.contains(key)).sorted()
                .map(key -> "'" + key + "'" + meant(key, known)).toList();
        if (!unknown.isEmpty()) {
            boolean admin = arguments.keySet().stream().anyMatch(ADMIN_KEYS::contains);
            return "unknown key" + (unknown.size() == 1 ? " " : "s ") + String.join(", ", unknown) + " in the body "
                    + "of this fencing operation (it takes " + known.stream().sorted()
                    .filter(name -> !name.equals("security")).collect(Collectors.joining(", ")) + ")"
                    + (admin ? "; the floor raise after a restore (afterRestore, atLeast) and the reset (to, override, "
                    + "force) need fencing.admin.enabled=true and a blocking FenceStore (an R2DBC store has no admin "
                    + "operations; the startup log says why they are not served)" : "") + "; a misspelt key would otherwise be dropped "
                    + "and the operation run without it";
        }
        List<String> empty = new ArrayList<>();
        arguments.forEach((key, value) -> {
            if (value == null || value.toString().isBlank()) {
                empty.add("'" + key + "'");
            }
        });
        if (!empty.isEmpty()) {
            return "no value for " + String.join(", ", empty) + ": give one, or leave the key out (a \"resource\" "
                    + "left empty would switch every resource)";
        }
        return SERVLET ? Servlet.problem(arguments, selectors) : null;
    }

    /** The known key {@code key} is probably meant for, as a hint: one differing in case or in a letter or two. */
    private static String meant(String key, Set<String> known) {
        String lower = key.toLowerCase(Locale.ROOT);
        return known.stream().filter(name -> !name.equals("security"))
                .filter(name -> name.toLowerCase(Locale.ROOT).equals(lower)
                        || PropertyNamesCheck.distance(name.toLowerCase(Locale.ROOT), lower) <= 2)
                .findFirst().map(name -> " (did you mean '" + name + "'?)").orElse("");
    }

    /** What the servlet request shows and the merged arguments hide; loaded only with the Servlet API present. */
    private static final class Servlet {

        private static final String PATH_VARIABLES = "org.springframework.web.servlet.HandlerMapping"
                + ".uriTemplateVariables";

        static String problem(Map<String, Object> arguments, Set<String> selectors) {
            if (!(org.springframework.web.context.request.RequestContextHolder.getRequestAttributes()
                    instanceof org.springframework.web.context.request.ServletRequestAttributes attributes)) {
                return null; // not over HTTP on the servlet stack (JMX, WebFlux)
            }
            jakarta.servlet.http.HttpServletRequest request = attributes.getRequest();
            if (request.getQueryString() != null && !request.getQueryString().isBlank()) {
                return "the query string ('" + request.getQueryString() + "') of a fencing write: send its keys in "
                        + "the JSON body only (Spring Boot lets a query key replace the body's)";
            }
            if (request.getAttribute(PATH_VARIABLES) instanceof Map<?, ?> path) {
                for (String selector : selectors) {
                    Object fromPath = path.get(selector);
                    if (fromPath != null && !Objects.equals(fromPath.toString(), String.valueOf(
                            arguments.get(selector)))) {
                        return "the body's \"" + selector + "\" ('" + arguments.get(selector) + "') differs from the "
                                + "path's ('" + fromPath + "'): name the " + selector + " in the path only";
                    }
                }
            }
            return null;
        }
    }
}

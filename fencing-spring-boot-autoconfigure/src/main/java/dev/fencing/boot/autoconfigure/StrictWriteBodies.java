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
 * another resource than the one changed). A read or a write whose path has a ';' is refused too, on the servlet stack:
 * the server drops what follows it as a path parameter, so {@code accounts:1;v=2} was read and reset as
 * {@code accounts:1} (on WebFlux, {@link ActuatorRequestFilter} refuses these three, as the operation never sees the
 * request there).
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
        if (!FENCING.equals(endpointId)) {
            return invoker;
        }
        Set<String> selectors = parameters.stream().filter(p -> p.getAnnotation(Selector.class) != null)
                .map(OperationParameter::getName).collect(Collectors.toSet());
        if (operationType != OperationType.WRITE) {
            if (selectors.isEmpty() || !SERVLET) {
                return invoker;
            }
            // a read of one resource: the path, or a query key Boot lets replace the path's, can name another
            return context -> {
                String problem = Servlet.readProblem(selectors);
                if (problem == null) {
                    return invoker.invoke(context);
                }
                return new WebEndpointResponse<>(Map.of("error", problem + ": nothing was read"),
                        WebEndpointResponse.STATUS_BAD_REQUEST);
            };
        }
        Set<String> known = parameters.stream().map(OperationParameter::getName).collect(Collectors.toSet());
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
                    + "operations; the startup log says why they are not served)" : "")
                    + "; a misspelt key would otherwise be dropped and the operation run without it";
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

    /**
     * Why a raw request path with a ';' cannot be served (on either web stack): the server reads what follows it, up
     * to the next '/', as a path parameter and drops it, so {@code accounts:1;v=2} would be read or lowered as
     * {@code accounts:1}. {@code null} when the raw path has none.
     */
    static String pathParameterProblem(String rawPath) {
        if (rawPath == null || rawPath.indexOf(';') < 0) {
            return null;
        }
        return "the path '" + dev.fencing.token.FencingToken.printable(rawPath) + "' has a ';', which the server "
                + "reads as the start of a path parameter and drops up to the next '/', so the operation would "
                + "see another resource than the one in the path (accounts:1;v=2 read as accounts:1): write a ';' "
                + "of a resource as %3B (/actuator/fencing/accounts:1%3Bv=2)";
    }

    /**
     * Why a write with a query string is refused (on either web stack): Spring Boot puts the query's keys into the
     * operation's arguments after the body's, so {@code ?to=3} with {@code {"to": 90}} lowered max_seen to 3, and
     * {@code ?resource=..} replaced the resource of the path or of the body.
     */
    static String queryStringProblem(String rawQuery) {
        return "the query string ('" + dev.fencing.token.FencingToken.printable(rawQuery) + "') of a fencing write: "
                + "send its keys in the JSON body only (Spring Boot lets a query key replace the body's)";
    }

    /**
     * Why a write whose body names another {@code selector} than its path is refused (on either web stack): Spring
     * Boot lets the body's key replace the path variable, so the log and any path-based security rule named another
     * resource than the one changed.
     */
    static String selectorProblem(String selector, String fromBody, String fromPath) {
        return "the body's \"" + selector + "\" ('" + dev.fencing.token.FencingToken.printable(fromBody)
                + "') differs from the path's ('" + dev.fencing.token.FencingToken.printable(fromPath) + "'): name the "
                + selector + " in the path only";
    }

    /**
     * Why a read whose query string names a {@code selector} is refused (on either web stack): Spring Boot lets the
     * query's key replace the path variable, so {@code GET /actuator/fencing/accounts:1?resource=accounts:2} showed
     * accounts:2 as if it were accounts:1.
     */
    static String selectorQueryProblem(String selector, String rawQuery) {
        return "the query string ('" + dev.fencing.token.FencingToken.printable(rawQuery) + "') names the \""
                + selector + "\", which Spring Boot lets replace the path's: name the " + selector + " in the path "
                + "only";
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
            String pathParameter = pathParameter(request);
            if (pathParameter != null) {
                return pathParameter;
            }
            if (request.getQueryString() != null && !request.getQueryString().isBlank()) {
                return queryStringProblem(request.getQueryString());
            }
            if (request.getAttribute(PATH_VARIABLES) instanceof Map<?, ?> path) {
                for (String selector : selectors) {
                    Object fromPath = path.get(selector);
                    if (fromPath != null && !Objects.equals(fromPath.toString(), String.valueOf(
                            arguments.get(selector)))) {
                        return selectorProblem(selector, String.valueOf(arguments.get(selector)),
                                fromPath.toString());
                    }
                }
            }
            return null;
        }

        /**
         * Why the read of one resource being served cannot be served: its path has a ';'
         * ({@link #pathParameter(jakarta.servlet.http.HttpServletRequest)}), or its query string names a selector.
         */
        static String readProblem(Set<String> selectors) {
            if (!(org.springframework.web.context.request.RequestContextHolder.getRequestAttributes()
                    instanceof org.springframework.web.context.request.ServletRequestAttributes attributes)) {
                return null;
            }
            jakarta.servlet.http.HttpServletRequest request = attributes.getRequest();
            String pathParameter = pathParameter(request);
            if (pathParameter != null) {
                return pathParameter;
            }
            for (String selector : selectors) {
                if (request.getQueryString() != null && request.getParameterMap().containsKey(selector)) {
                    return selectorQueryProblem(selector, request.getQueryString());
                }
            }
            return null;
        }

        /**
         * Why a path with a ';' cannot be served: the server (Tomcat, then Spring's path matching) reads what follows
         * it, up to the next '/', as a path parameter and drops it, so {@code /actuator/fencing/accounts:1;v=2}
         * reached the operation as {@code accounts:1}, and a reset lowered that resource's max_seen. {@code null} when
         * the raw path has none ({@code %3B} is a ';' in the resource, and arrives as one).
         */
        static String pathParameter(jakarta.servlet.http.HttpServletRequest request) {
            return pathParameterProblem(request.getRequestURI());
        }
    }
}

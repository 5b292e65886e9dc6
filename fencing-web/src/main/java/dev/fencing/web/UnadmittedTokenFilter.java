package dev.fencing.web;

import dev.fencing.web.internal.FencingProblems;
import dev.fencing.web.internal.ServletUrlPatterns;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRegistration;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletMapping;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Refuses, with 403 (problem type {@link FencingTokenFilter#UNTRUSTED_TOKEN_TYPE}), a request for a servlet other
 * than Spring MVC's {@code DispatcherServlet} (a servlet registered by hand, Jersey, a library's) that carries the
 * {@code Fencing-Token} header on a path the token filter is not mapped to. Ignored there, the header's token would be
 * set aside unseen by a {@code @Fenced(acquire = true)} method, which takes a lock of its own and writes: a zombie's
 * request would run. Spring MVC's requests are left to {@link UnadmittedTokenInterceptor}, which runs after every
 * filter; here the token filter's URL patterns decide, so this filter's place among the others does not matter. Map
 * it to every path. Requests without the header cost one header lookup.
 */
public final class UnadmittedTokenFilter implements Filter {

    private static final String DISPATCHER_SERVLET = "org.springframework.web.servlet.DispatcherServlet";

    private final String where;
    private final List<String> filterPatterns;
    /** Per servlet name: whether it is a {@code DispatcherServlet}; a bounded set, the application's servlets. */
    private final Map<String, Boolean> springMvc = new ConcurrentHashMap<>();

    /**
     * @param where          where the application accepts the header, for the refusal's detail
     * @param filterPatterns the servlet URL patterns the application's token filter is mapped to (none: it accepts
     *                       the header nowhere)
     */
    public UnadmittedTokenFilter(String where, List<String> filterPatterns) {
        this.where = Objects.requireNonNull(where, "where");
        this.filterPatterns = List.copyOf(filterPatterns);
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (request instanceof HttpServletRequest http && response instanceof HttpServletResponse answer
                && http.getHeaders(FencingHeader.NAME).hasMoreElements()
                && http.getDispatcherType() != DispatcherType.ERROR
                && http.getAttribute(FencingTokenFilter.APPLIED_ATTRIBUTE) == null
                && !ServletUrlPatterns.matches(filterPatterns, http) && !forSpringMvc(http)) {
            String servlet = http.getHttpServletMapping().getServletName();
            FencingTokenFilter.problem(answer, FencingProblems.untrustedHeader("The " + FencingHeader.NAME
                    + " header is not accepted on this path (servlet '" + servlet + "'), so its token could not be "
                    + "checked: " + where));
            return;
        }
        chain.doFilter(request, response);
    }

    /**
     * Whether the request goes to a {@code DispatcherServlet}, or the container cannot say which servlet it goes to.
     */
    private boolean forSpringMvc(HttpServletRequest request) {
        HttpServletMapping mapping = request.getHttpServletMapping();
        String name = mapping == null ? null : mapping.getServletName();
        if (name == null || name.isEmpty()) {
            return true; // no servlet named (a mock request): the interceptor decides, as before this filter
        }
        return springMvc.computeIfAbsent(name, servlet -> isDispatcherServlet(request.getServletContext(), servlet));
    }

    private static boolean isDispatcherServlet(ServletContext context, String servlet) {
        try {
            ServletRegistration registration = context.getServletRegistration(servlet);
            if (registration == null || registration.getClassName() == null) {
                return true;
            }
            for (Class<?> type = Class.forName(registration.getClassName(), false, context.getClassLoader());
                 type != null; type = type.getSuperclass()) {
                if (type.getName().equals(DISPATCHER_SERVLET)) {
                    return true;
                }
            }
            return false;
        } catch (ClassNotFoundException | LinkageError | RuntimeException e) {
            return true; // the container cannot say: the interceptor decides for Spring MVC, as before this filter
        }
    }
}

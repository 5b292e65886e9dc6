package dev.fencing.web;

import dev.fencing.web.internal.FencingProblems;
import dev.fencing.web.internal.ServletUrlPatterns;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.servlet.HandlerInterceptor;

import java.util.List;
import java.util.Objects;

/**
 * Refuses, with 403 (problem type {@link FencingTokenFilter#UNTRUSTED_TOKEN_TYPE}) before the handler runs, a Spring
 * MVC request that carries the {@code Fencing-Token} header but that no {@link FencingTokenFilter} admitted (none
 * marked it with {@link FencingTokenFilter#APPLIED_ATTRIBUTE}: no filter covers its path). Ignored, that header's
 * token would be set aside unseen by a {@code @Fenced(acquire = true)} method, which takes a lock of its own and
 * writes: a zombie's request would run. Requests without the header, and admitted ones, pass. It runs after every
 * servlet filter, so it holds whatever order the filters that admit the header have.
 */
public final class UnadmittedTokenInterceptor implements HandlerInterceptor {

    private final String where;
    private final List<String> filterPatterns;

    /** @param where where the application accepts the header, for the refusal's detail */
    public UnadmittedTokenInterceptor(String where) {
        this(where, List.of());
    }

    /**
     * @param where          where the application accepts the header, for the refusal's detail
     * @param filterPatterns the servlet URL patterns the application's token filter is mapped to: a refused request
     *                       on one of them is told that the filter did not run (filters turned off, as MockMvc's
     *                       {@code addFilters = false} does), not that its path does not accept the header
     */
    public UnadmittedTokenInterceptor(String where, List<String> filterPatterns) {
        this.where = Objects.requireNonNull(where, "where");
        this.filterPatterns = List.copyOf(filterPatterns);
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
            throws Exception {
        if (request.getAttribute(FencingTokenFilter.APPLIED_ATTRIBUTE) != null
                || request.getDispatcherType() == DispatcherType.ERROR
                || !request.getHeaders(FencingHeader.NAME).hasMoreElements()) {
            // an error dispatch renders an answer another filter chose (Spring Security's 401 or 403, say): it writes
            // nothing, and refusing it would put a fencing 403 in place of that answer
            return true;
        }
        String detail = !filterPatterns.isEmpty() && ServletUrlPatterns.matches(filterPatterns, request)
                ? "The " + FencingHeader.NAME + " header came on a path the token filter is mapped to ("
                        + String.join(", ", filterPatterns) + "), but no token filter ran for this request (servlet "
                        + "filters turned off, as MockMvc's addFilters = false does, or the filter's registration "
                        + "disabled), so its token could not be checked"
                : "The " + FencingHeader.NAME + " header is not accepted on this path, so its token could not be "
                        + "checked: " + where;
        FencingTokenFilter.problem(response, FencingProblems.untrustedHeader(detail));
        return false;
    }
}

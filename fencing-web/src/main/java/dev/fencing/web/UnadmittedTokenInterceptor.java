package dev.fencing.web;

import dev.fencing.web.internal.FencingProblems;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.servlet.HandlerInterceptor;

import java.util.Objects;

/**
 * Refuses, with 403 (problem type {@link FencingTokenFilter#UNTRUSTED_TOKEN_TYPE}) before the handler runs, a Spring
 * MVC request that carries the {@code Fencing-Token} header but that no {@link FencingTokenFilter} admitted (none
 * marked it with {@link FencingTokenFilter#APPLIED_ATTRIBUTE}: no filter covers its path). Ignored, that header's
 * token would be set aside unseen by a {@code @Fenced(acquire = true)} method, which takes a lock of its own and writes:
 * a zombie's request would run. Requests without the header, and admitted ones, pass. It runs after every servlet
 * filter, so it holds whatever order the filters that admit the header have.
 */
public final class UnadmittedTokenInterceptor implements HandlerInterceptor {

    private final String where;

    /** @param where where the application accepts the header, for the refusal's detail */
    public UnadmittedTokenInterceptor(String where) {
        this.where = Objects.requireNonNull(where, "where");
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
            throws Exception {
        if (request.getAttribute(FencingTokenFilter.APPLIED_ATTRIBUTE) != null
                || !request.getHeaders(FencingHeader.NAME).hasMoreElements()) {
            return true;
        }
        FencingTokenFilter.problem(response, FencingProblems.untrustedHeader("The " + FencingHeader.NAME + " header is "
                + "not accepted on this path, so its token could not be checked: " + where));
        return false;
    }
}

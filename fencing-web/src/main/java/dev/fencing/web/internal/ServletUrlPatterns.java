package dev.fencing.web.internal;

import dev.fencing.FencingConfigurationException;
import jakarta.servlet.http.HttpServletRequest;

import java.util.List;

/**
 * Servlet URL patterns for the token filter: which are accepted (an exact path, {@code /path/*}, {@code *.ext}; never
 * {@code /*} or {@code /}, which cover every request) and whether one matches a request, the way a servlet container
 * matches a filter mapping. Internal to fencing-web, not an API for applications.
 */
public final class ServletUrlPatterns {

    private ServletUrlPatterns() {
    }

    /**
     * Refuses a pattern that covers every request or is not a servlet URL pattern, with a
     * {@link FencingConfigurationException} whose message begins {@code where holds 'pattern'}.
     */
    public static void require(String pattern, String where) {
        String trimmed = pattern == null ? "" : pattern.trim();
        if (trimmed.equals("/*") || trimmed.equals("/")) {
            throw new FencingConfigurationException(where + " holds '" + pattern + "', every request: the "
                    + "filter would accept Fencing-Token headers from any caller, and a forged token opens the fence. "
                    + "Name the internal paths only your services call (for example '/internal/*'), or register a "
                    + "FencingTokenFilter with a trust predicate of your own (new FencingTokenFilter(request -> ...))");
        }
        if (!(isExtension(trimmed) || isPrefix(trimmed) || isExact(trimmed))) {
            throw new FencingConfigurationException(where + " holds '" + pattern + "', which is not a servlet "
                    + "URL pattern, so the Fencing-Token filter would not run where you meant: use '/path/*' for a "
                    + "path and everything below it (for example '/internal/*'; servlet patterns have no '**'), an "
                    + "exact path such as '/internal/deposit', or '*.ext'");
        }
    }

    /** The patterns, each {@linkplain #require required} and trimmed; none at all is refused too. */
    public static List<String> requireAll(List<String> patterns, String where) {
        if (patterns == null || patterns.isEmpty()) {
            throw new FencingConfigurationException(where + " names no URL pattern: the filter would accept "
                    + "Fencing-Token headers nowhere. Name the internal paths only your services call (for example "
                    + "'/internal/*')");
        }
        for (String pattern : patterns) {
            require(pattern, where);
        }
        return patterns.stream().map(String::trim).toList();
    }

    /**
     * Whether one of {@code patterns} (each {@linkplain #require accepted}) matches the request's path within the
     * application (its servlet path and path info, as the container decoded them).
     */
    public static boolean matches(List<String> patterns, HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String pathInfo = request.getPathInfo();
        String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
        for (String pattern : patterns) {
            if (matches(pattern, path)) {
                return true;
            }
        }
        return false;
    }

    static boolean matches(String pattern, String path) {
        if (isPrefix(pattern)) {
            String base = pattern.substring(0, pattern.length() - 2);
            return path.equals(base) || path.startsWith(base + "/");
        }
        if (isExtension(pattern)) {
            int slash = path.lastIndexOf('/');
            return path.indexOf('.', slash + 1) >= 0 && path.endsWith(pattern.substring(1));
        }
        return path.equals(pattern);
    }

    private static boolean isExtension(String pattern) {
        return pattern.startsWith("*.") && pattern.indexOf('*', 1) < 0 && pattern.indexOf('/') < 0;
    }

    private static boolean isPrefix(String pattern) {
        return pattern.startsWith("/") && pattern.endsWith("/*") && pattern.indexOf('*') == pattern.length() - 1;
    }

    private static boolean isExact(String pattern) {
        return pattern.startsWith("/") && pattern.indexOf('*') < 0;
    }
}

package dev.fencing.web.internal;

import dev.fencing.FencingConfigurationException;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Collection;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Which hosts a client sends tokens to, for every HTTP client the library supports: an entry {@code host} matches
 * that host on any port, an entry {@code host:port} only that port (the scheme's default port when the URI has none),
 * compared ignoring case; no host named matches nothing. An entry with a scheme, path, query, user-info or no host can
 * never match, so it is refused when the predicate is built. Internal to fencing-web, not an API for applications.
 */
public final class Destinations {

    private Destinations() {
    }

    /**
     * A predicate accepting the URIs whose host (and port) {@code hosts} names.
     *
     * @throws FencingConfigurationException when an entry is not {@code host} or {@code host:port}
     */
    public static Predicate<URI> hosts(Collection<String> hosts) {
        check(hosts, "forHosts(...)");
        Set<String> allowed = hosts.stream().map(String::trim)
                .map(host -> host.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
        return uri -> matches(allowed, uri);
    }

    /**
     * Refuses the first entry of {@code hosts} that is not {@code host} or {@code host:port}: blank, or with a scheme,
     * a path, a query, a fragment or user-info. {@code where} (a property or method name) is named in the message.
     *
     * @throws FencingConfigurationException naming {@code where}, the entry and the accepted form
     */
    public static void check(Collection<String> hosts, String where) {
        for (String entry : hosts) {
            String problem = problem(entry);
            if (problem != null) {
                throw new FencingConfigurationException(where + " entry '" + entry + "' " + problem + ": an entry is "
                        + "a host name ('ledger.internal') or host:port ('127.0.0.1:18081'), without scheme, path, "
                        + "query or user-info, and such an entry would never match a request, so no token would be "
                        + "sent");
            }
        }
    }

    private static String problem(String entry) {
        if (entry == null || entry.isBlank()) {
            return "is blank";
        }
        String trimmed = entry.trim();
        if (trimmed.contains("://")) {
            return "has a scheme";
        }
        URI uri;
        try {
            uri = new URI("//" + trimmed);
        } catch (URISyntaxException e) {
            return "does not parse as host or host:port (" + e.getReason() + ")";
        }
        if (uri.getRawUserInfo() != null) {
            return "has user-info";
        }
        if (uri.getRawPath() != null && !uri.getRawPath().isEmpty()) {
            return "has a path";
        }
        if (uri.getRawQuery() != null) {
            return "has a query";
        }
        if (uri.getRawFragment() != null) {
            return "has a fragment";
        }
        if (uri.getHost() == null || !trimmed.equalsIgnoreCase(uri.getPort() == -1 ? uri.getHost()
                : uri.getHost() + ":" + uri.getPort())) {
            return "is not a host or host:port";
        }
        if (uri.getPort() == 0 || uri.getPort() > 65_535) {
            return "has port " + uri.getPort() + ", outside 1-65535";
        }
        return null;
    }

    private static boolean matches(Set<String> allowed, URI uri) {
        String host = uri.getHost();
        if (host == null) {
            return false;
        }
        host = host.toLowerCase(Locale.ROOT);
        if (allowed.contains(host)) {
            return true;
        }
        int port = uri.getPort();
        if (port == -1) {
            port = "https".equalsIgnoreCase(uri.getScheme()) ? 443 : "http".equalsIgnoreCase(uri.getScheme()) ? 80 : -1;
        }
        return port != -1 && allowed.contains(host + ":" + port);
    }
}

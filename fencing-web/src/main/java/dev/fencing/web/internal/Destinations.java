package dev.fencing.web.internal;

import java.net.URI;
import java.util.Collection;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Which hosts a client sends tokens to, for every HTTP client the library supports: an entry {@code host} matches
 * that host on any port, an entry {@code host:port} only that port (the scheme's default port when the URI has none),
 * compared ignoring case; no host named matches nothing. Internal to fencing-web, not an API for applications.
 */
public final class Destinations {

    private Destinations() {
    }

    /** A predicate accepting the URIs whose host (and port) {@code hosts} names. */
    public static Predicate<URI> hosts(Collection<String> hosts) {
        Set<String> allowed = hosts.stream().map(String::trim).filter(host -> !host.isEmpty())
                .map(host -> host.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
        return uri -> matches(allowed, uri);
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

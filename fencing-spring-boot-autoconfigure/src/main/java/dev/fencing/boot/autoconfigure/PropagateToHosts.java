package dev.fencing.boot.autoconfigure;

import dev.fencing.web.internal.Destinations;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import java.util.List;

/**
 * The hosts {@code fencing.web.client.propagate-to} names, checked once for the RestClient and WebClient
 * auto-configurations alike: an entry that is not {@code host} or {@code host:port} fails startup naming the property,
 * the value and the accepted form; the hosts that will receive tokens are logged at INFO, once.
 */
final class PropagateToHosts {

    private static final Log log = LogFactory.getLog(PropagateToHosts.class);

    private final List<String> hosts;

    PropagateToHosts(List<String> hosts) {
        Destinations.check(hosts, FencingRestClientAutoConfiguration.PROPAGATE_TO);
        this.hosts = List.copyOf(hosts.stream().map(String::trim).toList());
        log.info("Fencing tokens will be sent to " + this.hosts + " (" + FencingRestClientAutoConfiguration.PROPAGATE_TO
                + "), on every path of those hosts");
    }

    /** The entries, trimmed. */
    List<String> hosts() {
        return hosts;
    }

    static final String REDIRECTS = "spring.http.clients.redirects";

    private final java.util.concurrent.atomic.AtomicBoolean redirectsWarned =
            new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * Warns, once per context, when Boot's HTTP clients (RestClient and WebClient alike) follow redirects, its
     * default: the token is added for a listed host, and the client then follows a redirect to any host with the
     * header on it, where a receiver could replay the token while the lock is held (a signing trial captured one that
     * way, through each client).
     */
    void warnOfRedirects(org.springframework.core.env.Environment environment) {
        String redirects = environment.getProperty(REDIRECTS, "follow-when-possible");
        if (!redirects.replace('_', '-').equalsIgnoreCase("dont-follow")
                && redirectsWarned.compareAndSet(false, true)) {
            log.warn(FencingRestClientAutoConfiguration.PROPAGATE_TO + " sends fencing tokens to " + hosts + ", and "
                    + "Boot's HTTP clients follow redirects (" + REDIRECTS + " is " + redirects + "): a redirect from "
                    + "one of them to another host takes the Fencing-Token header along, where its receiver could "
                    + "replay the token while the lock is held. Set " + REDIRECTS + "=dont-follow (a call answered "
                    + "with a redirect then returns the 3xx, to be checked), or make sure those hosts never redirect "
                    + "elsewhere");
        }
    }
}

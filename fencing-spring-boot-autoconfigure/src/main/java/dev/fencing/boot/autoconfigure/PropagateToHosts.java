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
}

package dev.fencing.sample;

import dev.fencing.etcd.EtcdTokenIssuer;
import io.etcd.jetcd.Client;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;

/**
 * 4. An etcd lock whose token is the lock key's create revision. Client 1 stops keeping its lease alive (its
 * connection goes away, as in a partition) and the lease really expires on the cluster, releasing the lock.
 */
final class EtcdStrategy implements Strategy {

    @Override
    public String name() {
        return "etcd";
    }

    @Override
    public Row run(SampleDatabase db, Options options, Progress progress) throws Throwable {
        String endpoint = options.etcd() != null ? options.etcd() : "http://127.0.0.1:2379";
        URI uri = URI.create(endpoint);
        try (Socket probe = new Socket()) {
            probe.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 500);
        } catch (java.io.IOException e) {
            return Row.skipped("etcd lock + revision", true, "no etcd at " + endpoint + "; pass --etcd URL");
        }
        Client c1 = Client.builder().endpoints(endpoint).build();
        try (Client c2 = Client.builder().endpoints(endpoint).build()) {
            EtcdTokenIssuer issuer1 = new EtcdTokenIssuer(c1, endpoint, "/fencing-sample/",
                    Duration.ofSeconds(1), null);
            try (EtcdTokenIssuer issuer2 = new EtcdTokenIssuer(c2, endpoint, "/fencing-sample/",
                    Duration.ofSeconds(5), null)) {
                return IssuerRace.run("etcd lock + revision", name(), db, issuer1, issuer2, "etcd-accounts:42",
                        c1::close, "it stops keeping its 1 s lease alive", progress);
            }
        }
    }
}

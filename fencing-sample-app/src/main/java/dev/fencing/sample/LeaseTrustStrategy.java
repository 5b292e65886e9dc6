package dev.fencing.sample;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;

import java.time.Duration;

/** 1. A lease, and a resource that trusts whoever believes they hold it. */
final class LeaseTrustStrategy implements Strategy {

    @Override
    public String name() {
        return "lease";
    }

    @Override
    public Row run(SampleDatabase db, Options options, Progress progress) {
        InMemoryTokenIssuer leases = new InMemoryTokenIssuer(options.lease(), 0);
        String key = "lease-trust:42";
        Lease client1 = leases.acquire(key, Duration.ofSeconds(10));
        progress.say(name(), "client 1 holds the lease; it pauses past the lease time ("
                + options.lease().toMillis() + " ms) ...");
        Lease client2 = leases.acquire(key, Duration.ofSeconds(30)); // blocks until the lease expires
        progress.say(name(), "lease expired; client 2 holds the lease and writes X");
        db.writeUnfenced(key, "X");
        progress.say(name(), "client 1 wakes, still believing it holds the lease, and writes Y: nothing checks it");
        db.writeUnfenced(key, "Y");
        client2.close();
        client1.close();
        String data = db.read(key);
        return new Row("Lease + trust the client", false, "none", false, !"Y".equals(data), data, null);
    }
}

package dev.fencing.verify.run;

import java.time.Duration;

/**
 * How long an issuer's lock outlives a silent holder, and how long the pause nemesis stops a holder so that it
 * outlives it too: the pause must cover the lease running out, the lock service noticing, and the next holder
 * taking the lock and writing, or no zombie is made. The JDBC lease and the ZooKeeper session are 1 s, paused
 * 2-3 s. An etcd lease cannot be that short: etcd 3.4 raises every lease TTL to at least 1.5 election timeouts,
 * rounded up to whole seconds (2 s with the 1 s election timeout {@code EtcdCluster} runs with); jetcd refreshes it
 * every third of the TTL, checked every 500 ms, and etcd's leader looks for expired leases every 500 ms. So an etcd
 * lock goes 2 to 2.5 s after its holder stops, and an etcd holder is paused 4-5 s.
 *
 * @param lease    the lease, session or TTL the clients ask for
 * @param pauseMin the shortest pause
 * @param pauseMax the longest
 */
public record IssuerTiming(Duration lease, Duration pauseMin, Duration pauseMax) {

    /** The JDBC lease and the ZooKeeper session: 1 s, pauses 2-3 s. */
    static final IssuerTiming ONE_SECOND = new IssuerTiming(Duration.ofSeconds(1), Duration.ofMillis(2_000),
            Duration.ofMillis(3_000));

    /** etcd: the 2 s minimum TTL, pauses 4-5 s. */
    static final IssuerTiming ETCD = new IssuerTiming(Duration.ofSeconds(2), Duration.ofMillis(4_000),
            Duration.ofMillis(5_000));

    /**
     * The timing of {@code issuer}.
     *
     * @throws IllegalArgumentException naming the issuer when it is not one of the four
     */
    public static IssuerTiming of(String issuer) {
        return switch (issuer) {
            case "jdbc-postgresql", "jdbc-mariadb", "zookeeper" -> ONE_SECOND;
            case "etcd" -> ETCD;
            default -> throw new IllegalArgumentException("no issuer named '" + issuer
                    + "' (expected jdbc-postgresql, jdbc-mariadb, zookeeper or etcd)");
        };
    }
}

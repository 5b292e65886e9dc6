package dev.fencing.verify.cluster;

import java.nio.file.Path;
import java.util.List;

/**
 * A lock service run as separate OS processes on this machine: a ZooKeeper ensemble ({@link ZooKeeperEnsemble}) or
 * an etcd cluster ({@link EtcdCluster}), each member its own process with its own data directory and free loopback
 * ports. The harness starts it, hands {@link #clientAddress()} to its client processes, and its nemeses kill and
 * restart members by the names {@link #members()} lists (the names a history's nemesis events use as targets).
 *
 * <p>{@link #close()} stops every member with bounded waits and may be called any number of times; every service
 * registers itself in a JVM shutdown hook when it starts, so a run stopped by Ctrl-C or SIGTERM leaves no member
 * running (a harness killed with SIGKILL cannot run hooks: its members' pids are in {@code <member dir>/pid}).
 */
public interface LockService extends AutoCloseable {

    /** {@code zookeeper} or {@code etcd}. */
    String name();

    /**
     * Starts every member and returns once the service serves: all members up and a quorum with a leader. Fails
     * with {@link LockServiceException} after a bounded wait, or as soon as a member exits, naming the member and
     * its log; the members already started are then stopped before it throws.
     */
    void start();

    /**
     * What a client process needs to reach the service: the ZooKeeper connect string
     * ({@code 127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3}) or the etcd endpoints, comma-separated
     * ({@code http://127.0.0.1:p1,...}). Every member is listed, whether it is running now or not.
     */
    String clientAddress();

    /**
     * The same with another host in place of {@code 127.0.0.1}: for a client in its own network namespace, which
     * reaches this machine through a veth address. Only useful when the service was built to accept clients on
     * every address (the {@code clientsOnAnyAddress} constructor argument); the members always talk to each other on
     * loopback.
     */
    String clientAddress(String host);

    /** The members' names, in order: {@code zk-1..zk-3} or {@code etcd-1..etcd-3}. */
    List<String> members();

    /** Whether the member's process is alive now. */
    boolean isRunning(String member);

    /** Sends SIGKILL to the member's process and waits (bounded) until it is gone; its data stays. */
    void kill(String member);

    /**
     * Starts the member again on its own ports and data directory (killing it first if it is still running) and
     * waits, bounded, until it serves again as part of the quorum.
     */
    void restart(String member);

    /** The member that leads right now, asked of the running members; {@code null} when none says it leads. */
    String leader();

    /** Every TCP port the members listen on (client and peer ports), for checks and for nemeses that cut traffic. */
    List<Integer> ports();

    /** The pid of the member's process, or -1 when it is not running. */
    long pid(String member);

    /**
     * The pid of every member process this service started, restarts included, dead or alive: to check none is left.
     */
    List<Long> launchedPids();

    /** Where the members' data directories, configuration and logs are. */
    Path directory();

    /** Kills every member (SIGKILL, bounded waits); idempotent. Data directories and logs stay for inspection. */
    @Override
    void close();
}

package dev.fencing.hazelcast;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.testsupport.RemoteTokenIssuerContract;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;

/**
 * The issuer contract on an embedded 3-member CP group: {@link #issuer()} on the first member, {@link #otherIssuer()}
 * on the second (its own CP session), the unreachable issuer on a client pointed at a port where nothing listens.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HazelcastTokenIssuerTest extends RemoteTokenIssuerContract {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private CpGroup group;
    private HazelcastTokenIssuer issuer;
    private HazelcastTokenIssuer otherIssuer;
    private int unreachablePort;

    @BeforeAll
    void start() {
        group = CpGroup.shared();
        issuer = new HazelcastTokenIssuer(group.members.get(0), "fencing-test/", Duration.ofMillis(200), registry);
        otherIssuer = new HazelcastTokenIssuer(group.members.get(1), "fencing-test/", Duration.ofMillis(200), registry);
        unreachablePort = CpGroup.freePort();
    }

    @AfterAll
    void stop() {
        issuer.close();
        otherIssuer.close();
    }

    @Override
    protected TokenIssuer issuer() {
        return issuer;
    }

    @Override
    protected TokenIssuer otherIssuer() {
        return otherIssuer;
    }

    @Override
    protected void afterNextGrant(String resource, Runnable action) {
        issuer.afterGrant = once(resource, action);
    }

    /** Closes the first member's CP session, as the CP group does when its heartbeats stop for the session TTL. */
    @Override
    protected void expire(Lease lease) throws Exception {
        group.closeSessionOf(group.members.get(0));
    }

    @Override
    protected MeterRegistry registry() {
        return registry;
    }

    @Override
    protected TokenIssuer unreachableIssuer() {
        return new HazelcastTokenIssuer(group.unreachableClient(unreachablePort), null);
    }

    @Override
    protected String unreachableServiceName() {
        return "127.0.0.1:" + unreachablePort;
    }
}

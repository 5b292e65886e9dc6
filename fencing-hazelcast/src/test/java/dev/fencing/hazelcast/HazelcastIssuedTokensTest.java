package dev.fencing.hazelcast;

import dev.fencing.issuer.TokenIssuer;
import dev.fencing.testsupport.IssuedTokensContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

/**
 * The Hazelcast issuer as recovery reads it (the CP group's current fence, whether a lock is held), on real members.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class HazelcastIssuedTokensTest extends IssuedTokensContract {

    private HazelcastTokenIssuer issuer;
    private HazelcastTokenIssuer other;

    @BeforeAll
    void start() {
        issuer = new HazelcastTokenIssuer(CpGroup.shared().members.get(0), "issued/", Duration.ofMillis(200), null);
        other = new HazelcastTokenIssuer(CpGroup.shared().members.get(0), "issued/", Duration.ofMillis(200), null);
    }

    @AfterAll
    void stop() {
        issuer.close();
        other.close();
    }

    @Override
    protected TokenIssuer issuer() {
        return issuer;
    }

    /** A second issuer on the same service, as another process (or this one restarted) builds it. */
    @Override
    protected TokenIssuer otherIssuer() {
        return other;
    }

    @Override
    protected TokenIssuer freshIssuer() {
        return new HazelcastTokenIssuer(CpGroup.shared().members.get(0), "issued/", Duration.ofMillis(200), null);
    }
}

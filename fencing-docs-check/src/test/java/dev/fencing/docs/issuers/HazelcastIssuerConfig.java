package dev.fencing.docs.issuers;

import com.hazelcast.config.Config;
import com.hazelcast.config.cp.CPSubsystemConfig;
import com.hazelcast.core.HazelcastInstance;
import dev.fencing.hazelcast.HazelcastTokenIssuer;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * docs/issuers.md: the Hazelcast issuer and the CP Subsystem configuration of the members. IssuersTest creates the
 * issuer on a client that has not connected yet (the constructor does not contact the cluster) and checks the member
 * configuration; locking on a real CP group is fencing-hazelcast's own test.
 */
@Configuration
public class HazelcastIssuerConfig {

    // tag::hazelcast-issuer[]
    @Bean(destroyMethod = "close")
    HazelcastTokenIssuer tokenIssuer(HazelcastInstance hazelcast, MeterRegistry registry) {
        return new HazelcastTokenIssuer(hazelcast, "fencing/", Duration.ofSeconds(1), registry);
    }
    // end::hazelcast-issuer[]

    /** The members' configuration, as in the docs. */
    static Config memberConfig() {
        Config config = new Config();
        // tag::hazelcast-cp-config[]
        CPSubsystemConfig cp = config.getCPSubsystemConfig();
        cp.setCPMemberCount(3);                      // 0 (the default) is "unsafe mode": refused by the issuer
        cp.setSessionTimeToLiveSeconds(60);          // a holder silent this long loses its locks
        cp.setSessionHeartbeatIntervalSeconds(5);
        cp.setMissingCPMemberAutoRemovalSeconds(14400);
        // end::hazelcast-cp-config[]
        return config;
    }
}

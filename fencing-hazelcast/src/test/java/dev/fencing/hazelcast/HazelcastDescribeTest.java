package dev.fencing.hazelcast;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code describe()}: what the health details ({@code issuer}) and the starter's startup warnings show of the issuer.
 * The Hazelcast issuer said nothing: the health showed only its type, and the warning logged when the CP group could
 * not be asked at startup ("if the lock service is up, the issuer's address is wrong: ...") ended in {@code {}}, where
 * the operator needs the cluster and the addresses to tell a typo from an outage.
 */
@Timeout(120)
class HazelcastDescribeTest {

    @Test
    void describesTheClusterAndItsAddressesAndThePrefix() {
        CpGroup group = CpGroup.shared();
        var client = group.client();
        HazelcastTokenIssuer issuer = new HazelcastTokenIssuer(client, "describe/", Duration.ofMillis(500), null);
        try {
            assertThat(issuer.describe())
                    .containsEntry("instance", CpSubsystemCheck.describe(client))
                    .containsEntry("prefix", "describe/")
                    .containsEntry("checkInterval", "PT0.5S");
            assertThat(String.valueOf(issuer.describe().get("instance"))).contains(group.clusterName)
                    .contains(group.addresses().get(0));
        } finally {
            issuer.close();
        }
    }
}

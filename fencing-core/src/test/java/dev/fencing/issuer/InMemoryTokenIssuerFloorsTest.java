package dev.fencing.issuer;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The in-memory issuer as {@link dev.fencing.retention.IssuerFloors}: family floors over per-resource counters. */
class InMemoryTokenIssuerFloorsTest {

    private final InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();

    private long take(String resource) {
        try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(1))) {
            return lease.token().value();
        }
    }

    @Test
    void newAndExistingResourcesOfAFamilyIssueAboveItsFloorAndOthersDoNot() {
        assertThat(take("accounts:1")).isEqualTo(1);
        issuer.raiseFamilyFloor("accounts", 40);
        issuer.raiseFamilyFloor("accounts", 10); // never lowers

        assertThat(issuer.highestIssued("accounts:2")).isEqualTo(40);
        assertThat(issuer.highestIssued("accounts:1")).isEqualTo(1);
        assertThat(take("accounts:1")).isEqualTo(41);
        assertThat(take("accounts:2")).isEqualTo(41);
        assertThat(take("accounts:2")).isEqualTo(42);
        assertThat(take("orders:1")).isEqualTo(1);
        assertThat(take("accounts")).isEqualTo(1); // no family
    }

    @Test
    void badArgumentsAreNamedAndChangeNothing() {
        issuer.raiseFamilyFloor("accounts", 5);
        assertThatThrownBy(() -> issuer.raiseFamilyFloor("accounts", -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("raiseFamilyFloor")
                .hasMessageContaining("'accounts'").hasMessageContaining("-1");
        assertThatThrownBy(() -> issuer.raiseFamilyFloor(" ", 9))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("family must not be blank");
        assertThat(take("accounts:1")).isEqualTo(6);
    }
}

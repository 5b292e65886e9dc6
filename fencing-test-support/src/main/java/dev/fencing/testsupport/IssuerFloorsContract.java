package dev.fencing.testsupport;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.retention.IssuerFloors;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What an issuer that is also {@link IssuerFloors} must do for compaction: once a family's floor is raised to a
 * value, every token it issues for a resource of that family (one it locked before, or a new one) is above the
 * value; bad arguments are refused, naming them. An issuer passes it with a subclass whose {@link #issuer()} returns
 * it, ready to lock.
 */
public abstract class IssuerFloorsContract {

    /** The issuer under test; must implement {@link IssuerFloors}. */
    protected abstract TokenIssuer issuer();

    private IssuerFloors floors() {
        assertThat(issuer()).isInstanceOf(IssuerFloors.class);
        return (IssuerFloors) issuer();
    }

    private long take(String resource) {
        try (Lease lease = issuer().acquire(resource, Duration.ofSeconds(10))) {
            return lease.token().value();
        }
    }

    @Test
    void afterAFloorIsRaisedEveryResourceOfTheFamilyIssuesAboveIt() {
        String family = "floors-" + UUID.randomUUID();
        long highest = 0;
        for (int i = 0; i < 5; i++) {
            highest = Math.max(highest, take(family + ":busy"));
        }
        take(family + ":quiet");
        floors().raiseFamilyFloor(family, highest); // what a compaction folding both resources would raise it to

        assertThat(take(family + ":quiet")).isGreaterThan(highest);
        assertThat(take(family + ":new")).isGreaterThan(highest);
        assertThat(take(family + ":busy")).isGreaterThan(highest);
    }

    @Test
    void blankFamiliesAndNegativeFloorsAreRefusedByName() {
        assertThatThrownBy(() -> floors().raiseFamilyFloor(" ", 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("family");
        assertThatThrownBy(() -> floors().raiseFamilyFloor("accounts", -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("accounts")
                .hasMessageContaining("-1");
    }
}

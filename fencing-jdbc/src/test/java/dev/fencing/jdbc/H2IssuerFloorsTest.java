package dev.fencing.jdbc;

import dev.fencing.issuer.LockAcquisitionException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The database lease as {@link dev.fencing.retention.IssuerFloors} on H2. */
class H2IssuerFloorsTest extends JdbcIssuerFloorsContract {
    @Override
    Database database() {
        return Database.H2;
    }

    /**
     * A family floor no issuer could have reached (a forged token's max_seen, folded by compaction) exhausts every
     * member's counter: the refusal says it is the family's floor, and what put it there (a red-team trial read only
     * "exhausted" for a resource it had never used).
     */
    @Test
    void aCounterExhaustedThroughItsFamilysFloorSaysSo() {
        String family = "exhausted" + UUID.randomUUID().toString().substring(0, 8);
        JdbcTokenIssuer issuer = (JdbcTokenIssuer) issuer();
        issuer.raiseFamilyFloor(family, Long.MAX_VALUE);
        assertThatThrownBy(() -> issuer.acquire(family + ":161", Duration.ofSeconds(1)))
                .isInstanceOf(LockAcquisitionException.class)
                .hasMessageContaining("'" + family + ":161'").hasMessageContaining("is exhausted")
                .hasMessageContaining("the floor of its family").hasMessageContaining("forged");
    }
}

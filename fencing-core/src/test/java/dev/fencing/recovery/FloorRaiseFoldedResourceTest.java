package dev.fencing.recovery;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.Lease;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * FloorRaise raises a resource it is told of (alsoResources) to the issuer's highest token for it when the store holds
 * no max_seen for it ("a resource without a row gets one at its floor"). The in-memory store answers maxSeen of a
 * folded resource with its family's floor, which FloorRaise took for "listed and raised already": the resource stayed
 * judged by the family's floor, below tokens the issuer handed out for it.
 */
@Timeout(30)
class FloorRaiseFoldedResourceTest {

    @Test
    void aNamedFoldedResourceIsRaisedToItsOwnHighestIssuedToken() throws Throwable {
        InMemoryTokenIssuer issuer = new InMemoryTokenIssuer();
        // the state as restored: acct's floor 2 (acct:1 was folded at 2), no slot for acct:1
        InMemoryFenceStore restored = new InMemoryFenceStore();
        restored.raiseFloor(FenceSql.familyFloorKey("acct"), 2);
        List<FencingToken> issuedSince = new ArrayList<>();
        for (int i = 0; i < 10; i++) { // acct:1's tokens 1..10, handed out (and written) since the backup
            try (Lease lease = issuer.acquire("acct:1", Duration.ofSeconds(1))) {
                issuedSince.add(lease.token());
            }
        }
        new FloorRaise(restored, restored, issuer, new AdminMetrics(new SimpleMeterRegistry()))
                .raiseAll(0, "ops:restore", List.of("acct:1"));

        FencingToken zombie = issuedSince.get(6); // token 7, written before the restore
        assertThatThrownBy(() -> restored.fence("acct:1", zombie, () -> null))
                .isInstanceOf(TokenRejectedException.class);
        assertThat(restored.maxSeen("acct:1")).hasValue(10);
    }
}

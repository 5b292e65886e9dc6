package dev.fencing.etcd;

import dev.fencing.issuer.Lease;
import io.etcd.jetcd.Client;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An issuer that could not read the cluster's revision at startup (etcd down) is told a bound read elsewhere, the
 * fence store's highest max_seen ({@code IssuedTokens.requireAbove}): a cluster back on an empty data dir answers
 * revisions below it, which this issuer, having never seen the revision, would otherwise hand out as tokens.
 */
@Timeout(120)
class EtcdRequiredFloorTest {

    private static final Duration T = Duration.ofSeconds(10);

    @Test
    void aRevisionAtOrBelowTheRequiredBoundIsRefusedAndOneAboveItIsIssued() throws Exception {
        try (EtcdCluster etcd = new EtcdCluster(1); Client client = etcd.client()) {
            long issued;
            try (EtcdTokenIssuer first = new EtcdTokenIssuer(client, etcd.endpoints(), "/floor/", T, null);
                 Lease lease = first.acquire("floor:1", T)) {
                issued = lease.token().value();
            }
            // as if the fence store had seen tokens of a cluster whose revision was far ahead of this one's
            try (EtcdTokenIssuer behind = new EtcdTokenIssuer(client, etcd.endpoints(), "/floor/", T, null)) {
                behind.requireAbove(issued + 1_000_000, "the fence store's highest max_seen (test)");
                assertThatThrownBy(() -> behind.acquire("floor:1", T).close())
                        .hasMessageContaining("floor:1")
                        .hasMessageContaining("the fence store's highest max_seen (test)")
                        .hasMessageContaining("went back");
                assertThatThrownBy(behind::probe).hasMessageContaining("went back");
            }
            try (EtcdTokenIssuer ahead = new EtcdTokenIssuer(client, etcd.endpoints(), "/floor/", T, null)) {
                ahead.requireAbove(issued, "the fence store's highest max_seen (test)");
                try (Lease lease = ahead.acquire("floor:1", T)) {
                    assertThat(lease.token().value()).isGreaterThan(issued);
                }
            }
        }
    }
}

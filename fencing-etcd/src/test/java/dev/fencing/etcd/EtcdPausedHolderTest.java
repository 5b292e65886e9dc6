package dev.fencing.etcd;

import dev.fencing.issuer.Lease;
import io.etcd.jetcd.Client;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A holder whose process was paused past its session's TTL (a GC, SIGSTOP) knows its lease is lost on its first look
 * after waking, by its own clock, before jetcd's keep-alive thread has noticed: a trial that stopped a holder for 12 s
 * on a 5 s TTL saw its write land (on a store it did not share with the next holder) 4 ms before the loss was logged.
 * Here the pause is the issuer's clock jumping ahead while etcd still keeps the session alive: the lease counts lost,
 * once, and the next acquire starts a new session with a larger token.
 */
@Timeout(120)
class EtcdPausedHolderTest {

    private static final Duration TTL = Duration.ofSeconds(5);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aLeaseWithoutAKeepAliveAnswerForTheTtlByThisProcesssClockIsLost() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        AtomicLong skipped = new AtomicLong();
        try (EtcdCluster etcd = new EtcdCluster(1); Client client = etcd.client()) {
            EtcdTokenIssuer issuer = new EtcdTokenIssuer(client, etcd.endpoints(), "/paused/", TTL, registry);
            issuer.nanoClock(() -> System.nanoTime() + skipped.get());
            try (Lease held = issuer.acquire("accounts", WAIT)) {
                assertThat(held.isLost()).isFalse();
                skipped.set(TTL.toNanos() - TimeUnit.SECONDS.toNanos(2)); // well within the TTL: still held
                assertThat(held.isLost()).isFalse();

                skipped.set(TTL.toNanos() + TimeUnit.SECONDS.toNanos(7)); // woke 12 s later
                assertThat(held.isLost()).as("lost on the first look after the pause").isTrue();
                assertThat(held.isLost()).isTrue();
                assertThat(registry.get("fencing.issuer.leases.lost").tag("issuer", "etcd").counter().count())
                        .as("counted once").isEqualTo(1);

                try (Lease next = issuer.acquire("accounts", WAIT)) { // a new session; the old one is revoked
                    assertThat(next.token().value()).isGreaterThan(held.token().value());
                    assertThat(next.token().holder()).isNotEqualTo(held.token().holder());
                    assertThat(next.isLost()).isFalse();
                }
            }
        }
    }
}

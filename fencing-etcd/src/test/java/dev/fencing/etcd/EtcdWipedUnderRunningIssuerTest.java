package dev.fencing.etcd;

import dev.fencing.issuer.Lease;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** An etcd restarted on an empty data dir under a running issuer; its revision starts over. */
@Timeout(180)
class EtcdWipedUnderRunningIssuerTest {

    private static final Duration T = Duration.ofSeconds(10);

    @Test
    void runningIssuerDoesNotGoBackAfterWipe() throws Throwable {
        try (EtcdCluster etcd = new EtcdCluster(1); Client client = etcd.client()) {
            EtcdTokenIssuer issuer = new EtcdTokenIssuer(client, etcd.endpoints(), "/mono/", T, null);
            for (int i = 0; i < 50; i++) {
                client.getKVClient().put(ByteSequence.from(("/mono-filler-" + i).getBytes()),
                        ByteSequence.from("x".getBytes())).get(5, TimeUnit.SECONDS);
            }
            long before;
            try (Lease a = issuer.acquire("mono:accounts:1", T)) {
                before = a.token().value();
            }
            EtcdCluster.Member m = etcd.members.get(0);
            m.kill();
            try (Stream<Path> files = Files.walk(m.dataDir)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
            m.start(EtcdCluster.binary(), m.name + "=http://127.0.0.1:" + m.peerPort, "mono-" + UUID.randomUUID());
            long after = -1;
            String refusal = null;
            long until = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (after < 0 && refusal == null && System.nanoTime() < until) {
                try (Lease b = issuer.acquire("mono:accounts:1", T)) {
                    after = b.token().value();
                } catch (RuntimeException e) {
                    if (String.valueOf(e.getMessage()).contains("went back")) {
                        refusal = e.getMessage();
                    }
                    Thread.sleep(300);
                }
            }
            if (refusal == null) {
                assertThat(after).as("token from the same issuer after etcd lost its data").isGreaterThan(before);
            } else { // refused, fail closed; and the issuer reports itself down (health) until a restart
                assertThatThrownBy(issuer::probe).hasMessageContaining("went back");
            }
            issuer.close();
        }
    }

    /**
     * Refused once, refused until a restart: the wiped cluster's revision soon passes the one this issuer saw, while
     * the old cluster handed out tokens above it to other processes. A trial's instance resumed handing out tokens
     * there (its health still DOWN, saying "restart this application").
     */
    @Test
    void refusalAfterWipeLastsWhenTheNewRevisionPassesTheOneSeen() throws Throwable {
        try (EtcdCluster etcd = new EtcdCluster(1); Client client = etcd.client()) {
            EtcdTokenIssuer issuer = new EtcdTokenIssuer(client, etcd.endpoints(), "/sticky/", T, null);
            for (int i = 0; i < 30; i++) {
                put(client, "/sticky-filler-" + i);
            }
            long before;
            try (Lease a = issuer.acquire("sticky:1", T)) {
                before = a.token().value();
            }
            EtcdCluster.Member m = etcd.members.get(0);
            m.kill();
            try (Stream<Path> files = Files.walk(m.dataDir)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
            m.start(EtcdCluster.binary(), m.name + "=http://127.0.0.1:" + m.peerPort, "sticky-" + UUID.randomUUID());
            String refusal = null;
            long until = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (refusal == null && System.nanoTime() < until) {
                try (Lease b = issuer.acquire("sticky:1", T)) {
                    throw new AssertionError("token " + b.token().value() + " after the wipe, not above " + before);
                } catch (RuntimeException e) {
                    if (String.valueOf(e.getMessage()).contains("went back")) {
                        refusal = e.getMessage();
                    } else {
                        Thread.sleep(300); // the member is still starting
                    }
                }
            }
            assertThat(refusal).as("refused after the wipe").isNotNull();
            for (int i = 0; i < before + 10; i++) {
                put(client, "/sticky-filler-" + i);
            }
            assertThatThrownBy(() -> issuer.acquire("sticky:2", T).close())
                    .as("the new cluster's revision is past " + before + " now; still refused until a restart")
                    .hasMessageContaining("went back");
            assertThatThrownBy(issuer::probe).hasMessageContaining("went back");
            issuer.close();
        }
    }

    private static void put(Client client, String key) throws Exception {
        client.getKVClient().put(ByteSequence.from(key.getBytes()), ByteSequence.from("x".getBytes()))
                .get(5, TimeUnit.SECONDS);
    }
}

package dev.fencing.etcd;

import dev.fencing.issuer.TokenIssuer;
import dev.fencing.testsupport.IssuerFloorsContract;
import io.etcd.jetcd.Client;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;

/** The etcd issuer as compaction uses it: one revision sequence, so a family floor needs no raise; on a real etcd. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EtcdIssuerFloorsTest extends IssuerFloorsContract {

    private EtcdCluster etcd;
    private Client client;
    private EtcdTokenIssuer issuer;
    private EtcdTokenIssuer other;

    @BeforeAll
    void start() throws Exception {
        etcd = new EtcdCluster(1);
        client = etcd.client();
        issuer = new EtcdTokenIssuer(client, etcd.endpoints(), "/fencing-floors/", Duration.ofSeconds(5), null);
        other = new EtcdTokenIssuer(client, etcd.endpoints(), "/fencing-floors/", Duration.ofSeconds(5), null);
    }

    @AfterAll
    void stop() throws Exception {
        issuer.close();
        other.close();
        client.close();
        etcd.close();
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
}

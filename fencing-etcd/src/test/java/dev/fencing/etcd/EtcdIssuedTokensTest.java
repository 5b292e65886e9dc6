package dev.fencing.etcd;

import dev.fencing.issuer.TokenIssuer;
import dev.fencing.testsupport.IssuedTokensContract;
import io.etcd.jetcd.Client;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;

/** The etcd issuer as recovery reads it (the revision now, the lock keys), on a real etcd process. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EtcdIssuedTokensTest extends IssuedTokensContract {

    private EtcdCluster etcd;
    private Client client;
    private EtcdTokenIssuer issuer;
    private EtcdTokenIssuer other;

    @BeforeAll
    void start() throws Exception {
        etcd = new EtcdCluster(1);
        client = etcd.client();
        issuer = new EtcdTokenIssuer(client, etcd.endpoints(), "/fencing-issued/", Duration.ofSeconds(5), null);
        other = new EtcdTokenIssuer(client, etcd.endpoints(), "/fencing-issued/", Duration.ofSeconds(5), null);
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

    @Override
    protected TokenIssuer freshIssuer() {
        return new EtcdTokenIssuer(client, etcd.endpoints(), "/fencing-issued/", Duration.ofSeconds(5), null);
    }
}

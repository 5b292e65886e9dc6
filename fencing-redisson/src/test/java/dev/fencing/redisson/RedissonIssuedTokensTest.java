package dev.fencing.redisson;

import dev.fencing.issuer.TokenIssuer;
import dev.fencing.redisson.RedissonTokenIssuer.PersistenceCheck;
import dev.fencing.testsupport.IssuedTokensContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.redisson.api.RedissonClient;

/** What the issuer knows for recovery, on the real Redis: the counter, and whether the lock key exists. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedissonIssuedTokensTest extends IssuedTokensContract {

    private final String prefix = Redis.prefix("issued");
    private RedissonClient client;
    private RedissonTokenIssuer issuer;

    @BeforeAll
    void start() {
        client = Redis.client(30_000);
        issuer = RedissonTokenIssuer.builder(client).prefix(prefix).persistenceCheck(PersistenceCheck.WARN).build();
    }

    @AfterAll
    void stop() {
        issuer.close();
        Redis.deleteAll(client, prefix);
        Redis.shutdown(client);
    }

    @Override
    protected TokenIssuer issuer() {
        return issuer;
    }
}

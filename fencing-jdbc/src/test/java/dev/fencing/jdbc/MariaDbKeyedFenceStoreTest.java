package dev.fencing.jdbc;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.BeforeAll;

import java.util.UUID;

/**
 * The JDBC store contract on MARIADB for resources with a family ({@code contract:<uuid>}): their check is the
 * statement that reads the family floor, where {@link MariaDbFenceStoreTest}'s resources take the one without. In
 * REPEATABLE READ (MariaDB's default) that read locks the family's floor row, which the store creates after the
 * family's first check; with it, concurrent first checks of new resources reach their verdicts without a deadlock.
 */
class MariaDbKeyedFenceStoreTest extends JdbcFenceStoreContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }

    @BeforeAll
    void familyChecked() throws Throwable {
        String r = freshResource();
        store.fence(r, new FencingToken(r, 1, "first"), () -> null);
        MariaDbFloorRowTest.awaitFloorRow(store, "contract");
    }

    @Override
    protected String freshResource() {
        return "contract:" + UUID.randomUUID();
    }
}

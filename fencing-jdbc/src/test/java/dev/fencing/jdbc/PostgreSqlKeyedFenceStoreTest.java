package dev.fencing.jdbc;

import java.util.UUID;

/**
 * The JDBC store contract on POSTGRESQL for resources with a family ({@code contract:<uuid>}): their check is the
 * statement that reads the family floor, where {@link PostgreSqlFenceStoreTest}'s resources take the one without.
 */
class PostgreSqlKeyedFenceStoreTest extends JdbcFenceStoreContract {
    @Override
    Database database() {
        return Database.POSTGRESQL;
    }

    @Override
    protected String freshResource() {
        return "contract:" + UUID.randomUUID();
    }
}

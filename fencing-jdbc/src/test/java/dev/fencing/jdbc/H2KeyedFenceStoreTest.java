package dev.fencing.jdbc;

import java.util.UUID;

/**
 * The JDBC store contract on H2 for resources with a family ({@code contract:<uuid>}): their check is the statement
 * that reads the family floor, where {@link H2FenceStoreTest}'s resources take the one without.
 */
class H2KeyedFenceStoreTest extends JdbcFenceStoreContract {
    @Override
    Database database() {
        return Database.H2;
    }

    @Override
    protected String freshResource() {
        return "contract:" + UUID.randomUUID();
    }
}

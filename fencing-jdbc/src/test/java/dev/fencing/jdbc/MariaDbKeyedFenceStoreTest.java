package dev.fencing.jdbc;

import java.util.UUID;

/**
 * The JDBC store contract on MARIADB for resources with a family ({@code contract:<uuid>}): their check is the statement
 * that reads the family floor, where {@link MariaDbFenceStoreTest}'s resources take the one without.
 */
class MariaDbKeyedFenceStoreTest extends JdbcFenceStoreContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }

    /** REPEATABLE READ (MariaDB's default): the floor read's gap lock can deadlock concurrent first checks. */
    @Override
    boolean concurrentFirstChecksMayConflict() {
        return true;
    }

    @Override
    protected String freshResource() {
        return "contract:" + UUID.randomUUID();
    }
}

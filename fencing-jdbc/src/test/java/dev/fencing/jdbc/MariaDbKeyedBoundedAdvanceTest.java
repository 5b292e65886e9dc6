package dev.fencing.jdbc;

import java.util.UUID;

/** The bounded JDBC store on MARIADB, for resources with a family (the check that reads the family floor). */
class MariaDbKeyedBoundedAdvanceTest extends JdbcBoundedAdvanceContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }

    @Override
    protected String freshResource() {
        return "contract:" + UUID.randomUUID();
    }
}

package dev.fencing.jdbc;

import java.util.UUID;

/** The bounded JDBC store on POSTGRESQL, for resources with a family (the check that reads the family floor). */
class PostgreSqlKeyedBoundedAdvanceTest extends JdbcBoundedAdvanceContract {
    @Override
    Database database() {
        return Database.POSTGRESQL;
    }

    @Override
    protected String freshResource() {
        return "contract:" + UUID.randomUUID();
    }
}

package dev.fencing.jdbc;

import java.util.UUID;

/** The bounded JDBC store on H2, for resources with a family (the check that reads the family floor). */
class H2KeyedBoundedAdvanceTest extends JdbcBoundedAdvanceContract {
    @Override
    Database database() {
        return Database.H2;
    }

    @Override
    protected String freshResource() {
        return "contract:" + UUID.randomUUID();
    }
}

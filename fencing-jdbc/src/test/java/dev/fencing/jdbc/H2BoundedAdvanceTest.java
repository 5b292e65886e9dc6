package dev.fencing.jdbc;

/** The bounded JDBC store on H2. */
class H2BoundedAdvanceTest extends JdbcBoundedAdvanceContract {
    @Override
    Database database() {
        return Database.H2;
    }
}

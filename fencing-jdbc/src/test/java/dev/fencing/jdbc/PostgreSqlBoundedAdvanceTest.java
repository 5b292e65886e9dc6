package dev.fencing.jdbc;

/** The bounded JDBC store on POSTGRESQL. */
class PostgreSqlBoundedAdvanceTest extends JdbcBoundedAdvanceContract {
    @Override
    Database database() {
        return Database.POSTGRESQL;
    }
}

package dev.fencing.jdbc;

/** The way back on POSTGRESQL. */
class PostgreSqlMaxSeenResetTest extends JdbcMaxSeenResetContract {
    @Override
    Database database() {
        return Database.POSTGRESQL;
    }
}

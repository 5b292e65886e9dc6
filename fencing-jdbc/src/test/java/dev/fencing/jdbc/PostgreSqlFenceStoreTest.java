package dev.fencing.jdbc;

/** The JDBC store contract on POSTGRESQL. */
class PostgreSqlFenceStoreTest extends JdbcFenceStoreContract {
    @Override
    Database database() {
        return Database.POSTGRESQL;
    }
}

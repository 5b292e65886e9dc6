package dev.fencing.jdbc;

/** The JDBC store contract on MARIADB. */
class MariaDbFenceStoreTest extends JdbcFenceStoreContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }
}

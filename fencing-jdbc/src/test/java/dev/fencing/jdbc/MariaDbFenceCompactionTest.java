package dev.fencing.jdbc;

/** {@link JdbcFenceCompactionContract} on MariaDb. */
class MariaDbFenceCompactionTest extends JdbcFenceCompactionContract {

    @Override
    Database database() {
        return Database.MARIADB;
    }
}

package dev.fencing.jdbc;

/** The way back on MARIADB. */
class MariaDbMaxSeenResetTest extends JdbcMaxSeenResetContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }
}

package dev.fencing.jdbc;

/** The bounded JDBC store on MARIADB. */
class MariaDbBoundedAdvanceTest extends JdbcBoundedAdvanceContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }
}

package dev.fencing.jdbc;

/** The database lease as {@link dev.fencing.retention.IssuerFloors} on MARIADB. */
class MariaDbIssuerFloorsTest extends JdbcIssuerFloorsContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }
}

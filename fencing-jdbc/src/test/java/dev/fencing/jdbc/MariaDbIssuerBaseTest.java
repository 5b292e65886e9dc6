package dev.fencing.jdbc;

/** The issuer base table, the fence table's listing and the floor raise after a restore, on MARIADB. */
class MariaDbIssuerBaseTest extends JdbcIssuerBaseContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }
}

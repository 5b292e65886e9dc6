package dev.fencing.jdbc;

/** The issuer base table, the fence table's listing and the floor raise after a restore, on POSTGRESQL. */
class PostgreSqlIssuerBaseTest extends JdbcIssuerBaseContract {
    @Override
    Database database() {
        return Database.POSTGRESQL;
    }
}

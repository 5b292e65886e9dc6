package dev.fencing.jdbc;

/** The database lease as {@link dev.fencing.retention.IssuerFloors} on POSTGRESQL. */
class PostgreSqlIssuerFloorsTest extends JdbcIssuerFloorsContract {
    @Override
    Database database() {
        return Database.POSTGRESQL;
    }
}

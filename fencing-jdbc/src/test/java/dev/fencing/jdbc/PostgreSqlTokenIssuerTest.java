package dev.fencing.jdbc;

/** The database lease issuer on POSTGRESQL. */
class PostgreSqlTokenIssuerTest extends JdbcTokenIssuerContract {
    @Override
    Database database() {
        return Database.POSTGRESQL;
    }
}

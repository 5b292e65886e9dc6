package dev.fencing.jdbc;

/** The database lease as recovery reads it, on POSTGRESQL. */
class PostgreSqlIssuedTokensTest extends JdbcIssuedTokensContract {
    @Override
    Database database() {
        return Database.POSTGRESQL;
    }
}

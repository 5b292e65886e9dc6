package dev.fencing.jdbc;

/** The database lease as recovery reads it, on MARIADB. */
class MariaDbIssuedTokensTest extends JdbcIssuedTokensContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }
}

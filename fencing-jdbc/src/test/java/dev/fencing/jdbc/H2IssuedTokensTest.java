package dev.fencing.jdbc;

/** The database lease as recovery reads it, on H2. */
class H2IssuedTokensTest extends JdbcIssuedTokensContract {
    @Override
    Database database() {
        return Database.H2;
    }
}

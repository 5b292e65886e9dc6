package dev.fencing.jdbc;

/** The database lease issuer on H2. */
class H2TokenIssuerTest extends JdbcTokenIssuerContract {
    @Override
    Database database() {
        return Database.H2;
    }
}

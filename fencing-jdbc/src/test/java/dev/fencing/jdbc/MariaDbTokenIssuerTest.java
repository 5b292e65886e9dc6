package dev.fencing.jdbc;

/** The database lease issuer on MARIADB. */
class MariaDbTokenIssuerTest extends JdbcTokenIssuerContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }
}

package dev.fencing.jdbc;

/** The issuer base table, the fence table's listing and the floor raise after a restore, on H2. */
class H2IssuerBaseTest extends JdbcIssuerBaseContract {
    @Override
    Database database() {
        return Database.H2;
    }
}

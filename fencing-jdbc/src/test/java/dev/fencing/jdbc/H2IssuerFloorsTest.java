package dev.fencing.jdbc;

/** The database lease as {@link dev.fencing.retention.IssuerFloors} on H2. */
class H2IssuerFloorsTest extends JdbcIssuerFloorsContract {
    @Override
    Database database() {
        return Database.H2;
    }
}

package dev.fencing.jdbc;

/** The JDBC store contract on H2. */
class H2FenceStoreTest extends JdbcFenceStoreContract {
    @Override
    Database database() {
        return Database.H2;
    }
}

package dev.fencing.jdbc;

/** {@link JdbcFenceCompactionContract} on H2. */
class H2FenceCompactionTest extends JdbcFenceCompactionContract {

    @Override
    Database database() {
        return Database.H2;
    }
}

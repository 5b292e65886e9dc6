package dev.fencing.jdbc;

/** The way back on H2. */
class H2MaxSeenResetTest extends JdbcMaxSeenResetContract {
    @Override
    Database database() {
        return Database.H2;
    }
}

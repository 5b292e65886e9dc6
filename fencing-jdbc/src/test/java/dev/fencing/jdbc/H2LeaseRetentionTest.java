package dev.fencing.jdbc;

/** Retention of the lease table on H2. */
class H2LeaseRetentionTest extends JdbcLeaseRetentionContract {
    @Override
    Database database() {
        return Database.H2;
    }
}

package dev.fencing.jdbc;

/** Retention of the lease table on POSTGRESQL. */
class PostgreSqlLeaseRetentionTest extends JdbcLeaseRetentionContract {
    @Override
    Database database() {
        return Database.POSTGRESQL;
    }
}

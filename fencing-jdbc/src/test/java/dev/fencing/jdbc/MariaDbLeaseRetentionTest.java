package dev.fencing.jdbc;

/** Retention of the lease table on MARIADB. */
class MariaDbLeaseRetentionTest extends JdbcLeaseRetentionContract {
    @Override
    Database database() {
        return Database.MARIADB;
    }
}

package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/**
 * {@link JdbcFenceCompactionContract} on MariaDB with {@code checkAtCommit(true)}: the checks sent with
 * {@code COMMIT} judge a resource without a row against its family floor too (the floor row the check inserts fails
 * the verdict statement after it).
 */
class MariaDbCheckAtCommitCompactionTest extends JdbcFenceCompactionContract {

    @Override
    Database database() {
        return Database.MARIADB;
    }

    @Override
    HikariDataSource newPool(int size) {
        return Database.MARIADB.newPoolWith(size, MariaDbCheckAtCommitTest.MULTI_QUERIES);
    }

    @Override
    protected boolean checksBeforeTheWrite() {
        return false;
    }

    @Override
    JdbcFenceStore.Builder configure(JdbcFenceStore.Builder builder) {
        return builder.checkAtCommit(true);
    }
}

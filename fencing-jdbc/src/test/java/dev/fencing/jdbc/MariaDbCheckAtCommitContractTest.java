package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/**
 * The JDBC store contract on MariaDB with {@code checkAtCommit(true)} (the pool's URL carrying
 * {@code allowMultiQueries=true}, which the mode needs): every rule, rollback, joining, restart and ordering test of
 * the default mode, and the two ordering tests restated for a check sent with COMMIT as on PostgreSQL
 * ({@link PostgreSqlCheckAtCommitContractTest}, whose versions this inherits).
 */
class MariaDbCheckAtCommitContractTest extends PostgreSqlCheckAtCommitContractTest {

    @Override
    Database database() {
        return Database.MARIADB;
    }

    @Override
    HikariDataSource newPool(int size) {
        return Database.MARIADB.newPoolWith(size, MariaDbCheckAtCommitTest.MULTI_QUERIES);
    }
}

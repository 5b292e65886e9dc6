package dev.fencing.jdbc;

/** {@link JdbcFenceCompactionContract} on PostgreSql. */
class PostgreSqlFenceCompactionTest extends JdbcFenceCompactionContract {

    @Override
    Database database() {
        return Database.POSTGRESQL;
    }
}

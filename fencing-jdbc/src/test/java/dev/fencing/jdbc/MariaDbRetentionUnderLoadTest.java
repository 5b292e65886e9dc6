package dev.fencing.jdbc;

/** {@link PostgreSqlRetentionUnderLoadTest} on MariaDB (compaction under {@code LOCK TABLES ... WRITE}). */
class MariaDbRetentionUnderLoadTest extends PostgreSqlRetentionUnderLoadTest {

    @Override
    Database database() {
        return Database.MARIADB;
    }
}

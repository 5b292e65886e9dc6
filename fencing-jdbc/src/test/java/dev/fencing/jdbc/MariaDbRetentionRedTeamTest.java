package dev.fencing.jdbc;

/** {@link PostgreSqlRetentionRedTeamTest} on MariaDB (compaction under {@code LOCK TABLES ... WRITE}). */
class MariaDbRetentionRedTeamTest extends PostgreSqlRetentionRedTeamTest {

    @Override
    Database database() {
        return Database.MARIADB;
    }
}

package dev.fencing.jdbc;

/**
 * {@link JdbcFenceCompactionContract} on PostgreSQL with {@code checkAtCommit(true)}: the checks sent with
 * {@code COMMIT} judge a resource without a row against its family floor too (the insert path raises the rejection).
 */
class PostgreSqlCheckAtCommitCompactionTest extends JdbcFenceCompactionContract {

    @Override
    Database database() {
        return Database.POSTGRESQL;
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

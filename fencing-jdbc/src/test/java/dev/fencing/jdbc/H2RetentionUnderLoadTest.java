package dev.fencing.jdbc;

import java.time.Duration;

/** {@link PostgreSqlRetentionUnderLoadTest} on H2 (compaction without a table lock: floors first, then deletes). */
class H2RetentionUnderLoadTest extends PostgreSqlRetentionUnderLoadTest {

    @Override
    Database database() {
        return Database.H2;
    }

    /** H2's compaction needs rows idle across a batch's wait (the lock wait bound): writers pause. */
    @Override
    long writerPauseMillis() {
        return 100;
    }

    @Override
    Duration lockTimeout() {
        return Duration.ofMillis(100);
    }
}

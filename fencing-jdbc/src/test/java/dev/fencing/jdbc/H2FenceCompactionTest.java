package dev.fencing.jdbc;

import java.time.Duration;

/**
 * {@link JdbcFenceCompactionContract} on H2. Its compaction waits the store's lock wait bound between raising the
 * floors and deleting (no table lock statement): a short bound, and writers that leave keys idle that long.
 */
class H2FenceCompactionTest extends JdbcFenceCompactionContract {

    @Override
    Database database() {
        return Database.H2;
    }

    @Override
    Duration lockTimeout() {
        return Duration.ofMillis(100);
    }

    @Override
    protected long writerPauseMillis() {
        return 100;
    }
}

package dev.fencing.verify.nemesis;

import java.sql.SQLException;

/**
 * Ends a client's database connections from the server side, the way a database restart, a failover or an
 * administrator does it: the client's next statement (or the one in flight) fails with a broken connection. One
 * implementation per store, since each names and kills sessions its own way.
 */
public interface ConnectionKiller {

    /**
     * Terminates every session the client named {@code client} ({@code client-3}) has open now and returns how many
     * were terminated (0 when it had none open).
     */
    int kill(String client) throws SQLException;
}

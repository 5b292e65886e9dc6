package dev.fencing.r2dbc;

import dev.fencing.recovery.FenceInventory;
import org.springframework.r2dbc.core.DatabaseClient;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The fence table of an {@link R2dbcFenceStore}, listed for operations that touch every resource and for startup
 * checks (the issuer's counter against the highest max_seen). Blocking, like every {@link FenceInventory}: call it
 * at startup or from an operations tool, never on an event loop. Each read waits at most 30 seconds.
 */
public final class R2dbcFenceInventory implements FenceInventory {

    private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

    private final DatabaseClient client;
    private final R2dbcDialect dialect;
    private final String table;

    R2dbcFenceInventory(DatabaseClient client, R2dbcDialect dialect, String table) {
        this.client = Objects.requireNonNull(client, "client");
        this.dialect = Objects.requireNonNull(dialect, "dialect");
        this.table = Objects.requireNonNull(table, "table");
    }

    /** {@inheritDoc} Keyset pages ({@code resource > ?}) in the database's order of the resource column. */
    @Override
    public List<String> resources(String after, int limit) {
        FenceInventory.checkLimit(limit);
        DatabaseClient.GenericExecuteSpec spec = client.sql(dialect.nativeMarkers(
                dialect.sql().resourcesSql(table, after != null, limit)));
        if (after != null) {
            spec = spec.bind(0, after);
        }
        List<String> page = spec.map(row -> row.get(0, String.class)).all().collectList().block(READ_TIMEOUT);
        return page == null ? List.of() : List.copyOf(page);
    }

    @Override
    public OptionalLong highestMaxSeen() {
        // MAX of an empty table is NULL, which a publisher cannot carry
        Optional<Long> highest = client.sql(dialect.sql().highestMaxSeenSql(table))
                .map(row -> Optional.ofNullable(row.get(0, Long.class))).one().block(READ_TIMEOUT);
        return highest == null || highest.isEmpty() ? OptionalLong.empty() : OptionalLong.of(highest.get());
    }

    @Override
    public OptionalLong maxSeen(String resource) {
        Objects.requireNonNull(resource, "resource");
        Optional<Long> value = client.sql(dialect.nativeMarkers(dialect.sql().maxSeenSql(table))).bind(0, resource)
                .map(row -> Optional.ofNullable(row.get(0, Long.class))).one().block(READ_TIMEOUT);
        return value == null || value.isEmpty() ? OptionalLong.empty() : OptionalLong.of(value.get());
    }

    @Override
    public String toString() {
        return "R2dbcFenceInventory[" + table + " on " + dialect.productName() + "]";
    }
}

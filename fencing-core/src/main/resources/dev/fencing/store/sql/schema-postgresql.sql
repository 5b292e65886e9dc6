-- fencing: the max_seen table (postgresql). One row per effective resource, and one per compacted resource family
-- (its floor, keyed family + U+001F); updated_at is when the row last advanced (the database's clock).
-- The default table name of JdbcFenceStore and R2dbcFenceStore is fencing_max_seen; use your own name consistently.
CREATE TABLE IF NOT EXISTS fencing_max_seen (
    resource   VARCHAR(256) NOT NULL PRIMARY KEY,
    max_seen   BIGINT       NOT NULL,
    holder     VARCHAR(256),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL
);

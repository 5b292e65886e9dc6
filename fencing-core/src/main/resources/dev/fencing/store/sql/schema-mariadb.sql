-- fencing: the max_seen table (mariadb). One row per effective resource, and one per resource family checked (its
-- floor, keyed family + U+001F: max_seen 0, no floor, until compaction raises it; the store creates it so that the
-- check locks that row rather than a gap; do not delete it); updated_at is when the row last advanced or was created
-- (the database's clock).
-- resource and holder compare exactly (binary, no padding): a/A, u/ü and 'x'/'x ' are distinct resources.
-- The default table name of JdbcFenceStore and R2dbcFenceStore is fencing_max_seen; use your own name consistently.
CREATE TABLE IF NOT EXISTS fencing_max_seen (
    resource   VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    max_seen   BIGINT       NOT NULL,
    holder     VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
    updated_at TIMESTAMP(6) NOT NULL
);

-- fencing: the max_seen table (mariadb). One row per effective resource.
-- JdbcFenceStore's default table name is fencing_max_seen; use your own name consistently.
CREATE TABLE IF NOT EXISTS fencing_max_seen (
    resource   VARCHAR(256) NOT NULL PRIMARY KEY,
    max_seen   BIGINT       NOT NULL,
    holder     VARCHAR(256),
    updated_at TIMESTAMP(6) NOT NULL
);

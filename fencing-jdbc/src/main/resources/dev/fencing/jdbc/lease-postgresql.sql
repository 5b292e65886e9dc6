-- fencing: the lease table of JdbcTokenIssuer (postgresql). One row per resource; its token only grows.
-- JdbcTokenIssuer's default table name is fencing_lease; use your own name consistently.
CREATE TABLE IF NOT EXISTS fencing_lease (
    resource   VARCHAR(256) NOT NULL PRIMARY KEY,
    holder     VARCHAR(256),
    token      BIGINT       NOT NULL,
    expires_at TIMESTAMP WITH TIME ZONE
);

-- fencing: the lease table of JdbcTokenIssuer (mariadb). One row per resource; its token only grows.
-- resource and holder compare exactly (binary, no padding): a/A, u/ü and 'x'/'x ' are distinct resources.
-- JdbcTokenIssuer's default table name is fencing_lease; use your own name consistently.
CREATE TABLE IF NOT EXISTS fencing_lease (
    resource   VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    holder     VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
    token      BIGINT       NOT NULL,
    expires_at TIMESTAMP(6) NULL
);

-- fencing: the issuer base table of JdbcIssuerBase (mariadb). One row per issuer migration; a base never changes.
-- name compares exactly (binary, no padding). JdbcIssuerBase's default table name is fencing_issuer_base.
CREATE TABLE IF NOT EXISTS fencing_issuer_base (
    name       VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    base       BIGINT       NOT NULL CHECK (base > 0),
    created_at TIMESTAMP(6) NOT NULL
);

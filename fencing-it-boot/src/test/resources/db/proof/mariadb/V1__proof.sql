-- The proof application's tables, and the fence and lease tables its fencing.* properties name
-- (copied from fencing-jdbc's dev/fencing/jdbc/schema-mariadb.sql and lease-mariadb.sql, tables renamed).
CREATE TABLE proof_account (
    id      BIGINT NOT NULL PRIMARY KEY,
    balance BIGINT NOT NULL
);
INSERT INTO proof_account (id, balance) VALUES (1, 0), (2, 0), (3, 0);

CREATE TABLE proof_order (
    id       BIGINT       NOT NULL PRIMARY KEY,
    item     VARCHAR(100) NOT NULL,
    quantity INT          NOT NULL CHECK (quantity > 0)
);

CREATE TABLE IF NOT EXISTS proof_max_seen (
    resource   VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    max_seen   BIGINT       NOT NULL,
    holder     VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
    updated_at TIMESTAMP(6) NOT NULL
);

CREATE TABLE IF NOT EXISTS proof_lease (
    resource   VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    holder     VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
    token      BIGINT       NOT NULL,
    expires_at TIMESTAMP(6) NULL
);

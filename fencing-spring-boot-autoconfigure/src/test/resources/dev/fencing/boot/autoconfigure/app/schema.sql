-- The tables of BootApplicationTest (names unique to it), created by spring.sql.init
DROP TABLE IF EXISTS boot_starter_it_account;
DROP TABLE IF EXISTS boot_starter_it_max_seen;
DROP TABLE IF EXISTS boot_starter_it_lease;
CREATE TABLE boot_starter_it_account (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL);
CREATE TABLE boot_starter_it_max_seen (
    resource   VARCHAR(256) NOT NULL PRIMARY KEY,
    max_seen   BIGINT       NOT NULL,
    holder     VARCHAR(256),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL
);
CREATE TABLE boot_starter_it_lease (
    resource   VARCHAR(256) NOT NULL PRIMARY KEY,
    holder     VARCHAR(256),
    token      BIGINT       NOT NULL,
    expires_at TIMESTAMP WITH TIME ZONE
);
INSERT INTO boot_starter_it_account (id, balance) VALUES (1, 0);

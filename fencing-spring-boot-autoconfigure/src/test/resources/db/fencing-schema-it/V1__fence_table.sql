-- A migration that owns the fence table, as an application with Flyway would; the extra column marks who made it.
CREATE TABLE ${fence_table} (
    resource   VARCHAR(256) NOT NULL PRIMARY KEY,
    max_seen   BIGINT       NOT NULL,
    holder     VARCHAR(256),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
    made_by_flyway BOOLEAN DEFAULT TRUE
);

-- spring.sql.init's schema script, owning the fence table; the extra column marks who made it.
CREATE TABLE sql_init_fence (
    resource   VARCHAR(256) NOT NULL PRIMARY KEY,
    max_seen   BIGINT       NOT NULL,
    holder     VARCHAR(256),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
    made_by_sql_init BOOLEAN DEFAULT TRUE
);

-- fencing: the issuer base table of JdbcIssuerBase (postgresql). One row per issuer migration; a base never changes.
-- JdbcIssuerBase's default table name is fencing_issuer_base; use your own name consistently.
CREATE TABLE IF NOT EXISTS fencing_issuer_base (
    name       VARCHAR(128) NOT NULL PRIMARY KEY,
    base       BIGINT       NOT NULL CHECK (base > 0),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL
);

-- pgbench script (see run.sh): the single-row insert fenced in the commit's round trip, as
-- JdbcFenceStore.Builder.checkAtCommit(true) does: the insert, then the check and COMMIT sent together. pgbench sends
-- each ';'-terminated statement in a round trip of its own, so the two are put in a pipeline (the startpipeline
-- and endpipeline meta-commands, pgbench 14+, extended protocol only: run.sh uses -M prepared): both statements go
-- out before one Sync and their results come back together, as the JDBC driver sends the store's multi-statement
-- text. A rejected check raises an error, and the server then skips the COMMIT after it up to the Sync. The check is
-- the one FenceSql.POSTGRESQL.checksAtCommitSql(table, lockTimeout, FenceRule.UNBOUNDED, 1) builds (its text also
-- starts with SET LOCAL lock_timeout, left out here), parameters as in insert-fenced.sql; PgbenchScriptsTest
-- (fencing-docs-check) checks that it is FenceSql's. run.sh puts the run's tables in place of @ROWS@ and @FENCE@.
BEGIN;
INSERT INTO @ROWS@ (k, v) VALUES ('client-' || CAST(:client_id AS TEXT), 1);
\startpipeline
INSERT INTO @FENCE@ AS f (resource, max_seen, holder, updated_at)
SELECT v.resource,
       CASE WHEN fl.max_seen IS NULL OR (v.token > fl.max_seen) THEN v.token ELSE fl.max_seen END,
       CASE WHEN fl.max_seen IS NULL OR (v.token > fl.max_seen) THEN v.holder END,
       CURRENT_TIMESTAMP
FROM (VALUES (CAST('bench' || chr(58) || 'client-' || CAST(:client_id AS TEXT) AS TEXT),
              CAST(1 AS BIGINT),
              CAST('lease-' || CAST(:client_id AS TEXT) AS TEXT), CAST('bench' || chr(31) AS TEXT)))
         AS v (resource, token, holder, floor_key)
       LEFT JOIN @FENCE@ fl ON fl.resource = v.floor_key
ON CONFLICT (resource) DO UPDATE SET (updated_at, holder, max_seen) = (
    SELECT CASE WHEN (f.max_seen < p.token) OR (f.max_seen = p.token AND f.holder = p.holder)
                THEN EXCLUDED.updated_at ELSE f.updated_at END,
           CASE WHEN f.max_seen < p.token THEN p.holder ELSE f.holder END,
           CASE WHEN f.max_seen < p.token THEN p.token
                WHEN f.max_seen = p.token AND f.holder = p.holder THEN f.max_seen
                ELSE CAST('fencing-rejected check=0 max_seen=' || f.max_seen AS BIGINT) END
    FROM (VALUES (CAST(1 AS BIGINT), CAST('lease-' || CAST(:client_id AS TEXT) AS TEXT),
                  CAST('bench' || chr(31) AS TEXT))) AS p (token, holder, floor_key))
RETURNING CASE WHEN f.holder IS NULL
               THEN CAST('fencing-rejected check=0 max_seen=' || f.max_seen AS BIGINT) END;
COMMIT;
\endpipeline

-- pgbench script (see run.sh): the single-row insert fenced with the check as a statement of its own, one round
-- trip more than insert-unfenced.sql. The check is FenceSql.POSTGRESQL.checkSql(table, FenceRule.UNBOUNDED) (the
-- statement JdbcFenceStore sends; it also sets and puts back lock_timeout in the same round trip, left out here),
-- copied with its six parameters written out: resource client-N of family bench (N = client_id), token 1, holder
-- lease-N (the same token each time: the accepted re-check of a held lease, as in JdbcFenceBenchmark), floor key
-- 'bench' || U+001F (FenceSql.floorKeyOf; no floor row exists, so the probe finds nothing), token and holder again
-- (the update path's, which the check takes from the second transaction on). PgbenchScriptsTest (fencing-docs-check) checks it is
-- FenceSql's. chr(58) is the colon of the resource: pgbench reads a colon followed by a name as a variable, even
-- inside a string. run.sh puts the run's tables in place of @ROWS@ and @FENCE@.
BEGIN;
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
           CASE WHEN f.max_seen < p.token THEN p.token ELSE f.max_seen END
    FROM (VALUES (CAST(1 AS BIGINT), CAST('lease-' || CAST(:client_id AS TEXT) AS TEXT),
                  CAST('bench' || chr(31) AS TEXT))) AS p (token, holder, floor_key))
RETURNING max_seen, holder;
INSERT INTO @ROWS@ (k, v) VALUES ('client-' || CAST(:client_id AS TEXT), 1);
COMMIT;

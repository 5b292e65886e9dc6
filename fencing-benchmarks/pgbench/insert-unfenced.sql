-- pgbench script (see run.sh): the single-row insert of JdbcFenceBenchmark.insertUnfenced, unfenced.
-- run.sh puts the run's table in place of @ROWS@; client_id is pgbench's (0 to 3 with -c 4).
BEGIN;
INSERT INTO @ROWS@ (k, v) VALUES ('client-' || CAST(:client_id AS TEXT), 1);
COMMIT;

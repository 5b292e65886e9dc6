#!/usr/bin/env bash
# The ceiling pgbench puts on JdbcFenceBenchmark's single-row insert (PostgreSQL only): the same transaction without a
# JVM, a pool or Spring, in three shapes, each run for the same time with the same 4 clients as JdbcFenceBenchmark
# (-c 4 -j 2), each client on a resource of its own (client_id):
#   insert-unfenced.sql          BEGIN; INSERT; COMMIT
#   insert-fenced.sql            BEGIN; check; INSERT; COMMIT             (the check in a round trip of its own)
#   insert-fenced-at-commit.sql  BEGIN; INSERT; check + COMMIT pipelined  (the check in the commit's round trip)
# All three with -M prepared (the pipeline needs the extended protocol; the JDBC driver prepares a statement it runs
# often, too). pgbench sends BEGIN in a round trip of its own, in every shape (the JDBC driver sends it with the
# first statement). Prints the tps of each shape and the two fenced shapes' ratios to the unfenced one.
# The tables (rows, and the fence table from the schema the library ships) are unique to the run and dropped at the
# end, also after a failure.
# Usage: fencing-benchmarks/pgbench/run.sh [seconds per shape, default 20]
# Environment: PGHOST (127.0.0.1), PGPORT (5432), PGUSER (postgres), PGDATABASE (test).
set -euo pipefail
duration=${1:-20}
if [[ ! $duration =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: seconds per shape must be a positive whole number, was '$duration'" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres} PGDATABASE=${PGDATABASE:-test}
suffix=$(od -An -N5 -tx1 /dev/urandom | tr -d ' \n')
rows=pgb_rows_$suffix
fence=pgb_fence_$suffix
work=$(mktemp -d)

cleanup() {
  psql -X -q -v ON_ERROR_STOP=1 -c "DROP TABLE IF EXISTS $rows; DROP TABLE IF EXISTS $fence" || true
  rm -rf "$work"
}
trap cleanup EXIT

# the fence table as FenceSql.POSTGRESQL.createTableSql makes it (schema-postgresql.sql)
psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE TABLE $rows (id BIGSERIAL PRIMARY KEY, k VARCHAR(64) NOT NULL, v INT NOT NULL);
CREATE TABLE $fence (
    resource   VARCHAR(256) NOT NULL PRIMARY KEY,
    max_seen   BIGINT       NOT NULL,
    holder     VARCHAR(256),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL
);
SQL

server=$(psql -X -At -c 'SHOW server_version')
sync=$(psql -X -At -c 'SHOW synchronous_commit')
echo "$(pgbench --version); server $server, synchronous_commit=$sync;" \
  "tables $rows, $fence; -c 4 -j 2 -M prepared -T $duration"
declare -A tps
for shape in insert-unfenced insert-fenced insert-fenced-at-commit; do
  sed -e "s/@ROWS@/$rows/g" -e "s/@FENCE@/$fence/g" "$here/$shape.sql" > "$work/$shape.sql"
  pgbench -n -M prepared -c 4 -j 2 -T "$duration" -f "$work/$shape.sql" > "$work/$shape.out" 2>&1 || {
    echo "run.sh: pgbench failed on $shape:" >&2; cat "$work/$shape.out" >&2; exit 1; }
  failed=$(awk '/^number of failed transactions:/ {print $5}' "$work/$shape.out")
  if [[ -n $failed && $failed != 0 ]]; then
    echo "run.sh: $shape had $failed failed transactions:" >&2; cat "$work/$shape.out" >&2; exit 1
  fi
  tps[$shape]=$(awk '/^tps = / {print $3; exit}' "$work/$shape.out")
  [[ -n ${tps[$shape]} ]] || { echo "run.sh: no tps in the output of $shape:" >&2; cat "$work/$shape.out" >&2; exit 1; }
  latency=$(awk '/^latency average = / {print $4; exit}' "$work/$shape.out")
  printf '%-24s %10.1f tps  (latency average %s ms, %s transactions)\n' "$shape" "${tps[$shape]}" "$latency" \
    "$(awk '/^number of transactions actually processed:/ {print $6}' "$work/$shape.out")"
done
rows_written=$(psql -X -At -c "SELECT count(*) FROM $rows")
# the plain check returns its row for the store to judge, which pgbench does not: the fence table must show that every
# check was the accepted re-check (one row per client, max_seen 1, its own holder)
held=$(psql -X -At -c "SELECT count(*) FROM $fence WHERE max_seen = 1 AND holder = 'lease-' || substr(resource, 14)")
if [[ $held != 4 ]]; then
  echo "run.sh: the fence table $fence should hold 4 rows, max_seen 1, each its client's holder:" >&2
  psql -X -c "SELECT * FROM $fence" >&2
  exit 1
fi
echo "rows table: $rows_written rows; fence table: 4 rows (max_seen 1, each client's holder)"
awk -v u="${tps[insert-unfenced]}" -v f="${tps[insert-fenced]}" -v c="${tps[insert-fenced-at-commit]}" 'BEGIN {
  printf "fenced / unfenced:           %.3f\n", f / u
  printf "fenced at commit / unfenced: %.3f\n", c / u }'

#!/usr/bin/env bash
# The long runs of docs/verification.md: each issuer with the PostgreSQL store (and the MariaDB pair), the lock-set
# workload over 8 resources, 8 clients, pauses, kills and partitions, 20 minutes (TIME_LIMIT), fence off and on.
#
#   mvn -B -q -pl fencing-verify -am package -DskipTests
#   fencing-verify/scripts/long-runs.sh [zookeeper etcd jdbc-postgresql jdbc-mariadb/mariadb ...]
#   fencing-verify/scripts/long-runs-table.sh target/verify/long/*/summary.json
#
# Two runs go at once (fence off and on of one issuer); a pair takes TIME_LIMIT and half a minute on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
jar=fencing-verify/target/fencing-verify.jar
out=target/verify/long
limit=${TIME_LIMIT:-20m}
mkdir -p "$out"
pairs=("$@")
[ ${#pairs[@]} -gt 0 ] || pairs=(zookeeper etcd jdbc-postgresql jdbc-mariadb/mariadb)
for pair in "${pairs[@]}"; do
  issuer=${pair%%/*}
  store=postgresql
  [[ $pair == */* ]] && store=${pair##*/}
  for fence in off on; do
    name="lock-set-$issuer-$store-fence-$fence"
    java -jar "$jar" --workload lock-set --issuer "$issuer" --store "$store" --nemesis pause,kill,partition \
      --clients 8 --resources 8 --time-limit "$limit" --fence "$fence" --out "$out/$name" > "$out/$name.log" 2>&1 &
    sleep 20     # the two runs' clients do not start at the same moment
  done
  wait || true   # exit 1 (invalid) is the expected outcome of a fence-off run
done

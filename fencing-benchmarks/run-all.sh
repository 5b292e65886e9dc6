#!/usr/bin/env bash
# Runs every benchmark behind docs/benchmarks.md, one after the other, and writes the JSON results beside that page
# (docs/benchmarks/*.json) and each run's text output and the machine's load average to target/bench-logs/.
# Build first: mvn -q -B -pl fencing-benchmarks -am -DskipTests package
# Needs PostgreSQL on 127.0.0.1:5432, database test (JDBC, check statement, scale, pgbench and whole-request runs),
# MariaDB on 127.0.0.1:3306, database test, user root without a password (JDBC and check statement runs), pgbench 14+
# on the PATH (pgbench) and etcd on the PATH (issuers).
# Usage: fencing-benchmarks/run-all.sh [step ...]   (steps: percall interleaved proxykey keys keyed signed contention scale footprint jdbc checkstmt
#        r2dbc tablesize pgbench request paired profile issuers reactive origins; default: all but issuers, reactive
#        and origins,
#        whose figures are from earlier runs)
#        BENCH_SUFFIX=-sixth-machine fencing-benchmarks/run-all.sh paired writes whole-request-paired-sixth-machine.json
#        instead of overwriting the file of the run docs/benchmarks.md cites (every file a step writes there takes it)
set -euo pipefail
cd "$(dirname "$0")/.."
jar=fencing-benchmarks/target/benchmarks.jar
out=docs/benchmarks
logs=fencing-benchmarks/target/bench-logs
suffix=${BENCH_SUFFIX:-}
mkdir -p "$logs"
[ -f "$jar" ] || { echo "Build first: mvn -q -B -pl fencing-benchmarks -am -DskipTests package" >&2; exit 1; }

run() { # name, then JMH arguments
  local name=$1; shift
  echo "== $name: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$logs/load.txt"
  java -jar "$jar" "$@" -rf json -rff "$out/$name$suffix.json" > "$logs/$name.txt" 2>&1
  grep -E '^[A-Z][A-Za-z]+Benchmark\.' "$logs/$name.txt" | grep -v ':gc\.\(count\|time\|alloc\.rate \)' || true
}

rounds() { # name, rounds, JMH arguments; then RoundRatios's --ratio/--diff specs from the array RATIOS
  local name=$1 count=$2; shift 2
  local files=() r
  for r in $(seq 1 "$count"); do
    echo "== $name round $r/$count: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$logs/load.txt"
    java -jar "$jar" "$@" -rf json -rff "$logs/$name-r$r.json" > "$logs/$name-r$r.txt" 2>&1
    files+=("$logs/$name-r$r.json")
  done
  java -cp "$jar" dev.fencing.benchmarks.RoundRatios --merged "$out/$name$suffix.json" "${RATIOS[@]}" "${files[@]}" \
    | tee "$logs/$name-ratios.txt"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(percall interleaved keys keyed profile signed contention scale footprint jdbc checkstmt r2dbc tablesize pgbench request paired)
for step in "${steps[@]}"; do
  case $step in
    percall)    RATIOS=(--ratio proxyFenced/proxyNoOpMethodInterceptor --ratio proxyPrimitivesFloor/proxyNoOpMethodInterceptor
                        --diff proxyFenced-proxyPrimitivesFloor --ratio proxyFencedWithSpelKey/proxyFenced
                        --ratio proxyFencedWithSpelKey/proxyFencedTwo
                        --ratio proxyFencedWithSpelKeyInANewScope/proxyFencedTwoInANewScope
                        --diff wovenFenced-wovenPlainCall --diff primitivesFloor-plainCall
                        --diff wovenFenced-primitivesFloor --diff wovenFencedWithSpelKey-wovenFenced
                        --diff 'proxyFenced#alloc-proxyNoOpMethodInterceptor#alloc'
                        --diff 'wovenFenced#alloc-wovenPlainCall#alloc' --diff 'wovenFencedWithLargeKey#alloc-wovenPlainCall#alloc')
                rounds fence-overhead 6 FenceOverheadBenchmark -prof gc -f 1 -wi 2 -w 1 -i 3 -r 1
                # the proxy's bracket against the guard's callback, same point and store, paired by round
                RATIOS=(--ratio proxyBracket/proxyGuard --diff proxyGuard-proxyBracket --ratio proxyBracket/proxyNoOp
                        --ratio proxyGuard/proxyNoOp)
                rounds proxy-bracket 10 'FenceAnatomyBenchmark\.(proxyNoOp|proxyGuard|proxyBracket)$' -f 1 -wi 3 -w 1 -i 5 -r 1
                run fence-anatomy FenceAnatomyBenchmark -prof gc -f 1 -wi 3 -w 2 -i 5 -r 2 ;&
    proxykey)   # the key's cost on the proxy alone, in more and shorter rounds than the whole table (percall runs it too)
                RATIOS=(--ratio proxyFencedWithSpelKey/proxyFenced --diff proxyFencedWithSpelKey-proxyFenced
                        --ratio proxyFencedWithSpelKey/proxyFencedTwo --ratio proxyFenced/proxyNoOpMethodInterceptor)
                rounds proxy-key 10 'FenceOverheadBenchmark\.(proxyNoOpMethodInterceptor|proxyFenced|proxyFencedTwo|proxyFencedWithSpelKey)$' \
                  -f 1 -wi 3 -w 1 -i 5 -r 1 ;;
    interleaved) # the proxy's ratios from interleaved blocks of calls (InterleavedCalls): robust to the host's slow windows
                echo "== interleaved: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$logs/load.txt"
                java -cp "$jar" dev.fencing.benchmarks.InterleavedCalls 60 2>/dev/null | tee "$out/interleaved-calls$suffix.txt" ;;
    keys)       # each kind of key against the unkeyed fence, on the proxy: one argument, an argument's getter (a method
                # handle), an expression SpEL compiles, one it cannot compile (a package-private argument type)
                RATIOS=()
                for key in SpelKey PropertyKey EvaluatedKey InterpretedKey; do
                  RATIOS+=(--ratio "proxyFencedWith$key/proxyFenced" --diff "proxyFencedWith$key-proxyFenced"
                           --diff "proxyFencedWith$key#alloc-proxyFenced#alloc")
                done
                rounds proxy-keys 8 'FenceOverheadBenchmark\.(proxyFenced|proxyFencedWith(SpelKey|PropertyKey|EvaluatedKey|InterpretedKey))$' \
                  -prof gc -f 1 -wi 3 -w 1 -i 5 -r 1 ;;
    keyed)      RATIOS=()
                for key in long string; do for others in true false; do
                  RATIOS+=(--ratio "matched[key=$key,others=$others]/builtText[key=$key,others=$others]"
                           --diff "matched[key=$key,others=$others]-builtText[key=$key,others=$others]"
                           --diff "matchedOtherKey[key=$key,others=$others]-unkeyed[key=$key,others=$others]"
                           --diff "matchedInANewScope[key=$key,others=$others]-unkeyedInANewScope[key=$key,others=$others]")
                done; done
                rounds keyed-lookup 6 'KeyedLookupBenchmark\.(builtText|matched|matchedOtherKey|unkeyed|matchedInANewScope|unkeyedInANewScope)$' -prof gc -f 1 -wi 3 -w 1 -i 3 -r 1 ;;
    signed)     run signed-fence SignedFenceBenchmark -prof gc -f 1 -wi 3 -w 1 -i 5 -r 2 ;;
    contention) run fence-contention FenceContentionBenchmark -f 1 -wi 3 -w 2 -i 5 -r 2 ;;
    scale)      for t in 1 2 4 8; do
                  run scale-threads-t$t FenceScaleBenchmark -t $t -f 1 -wi 2 -w 1 -i 3 -r 2
                done ;;
    footprint)  echo "== footprint: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$logs/load.txt"
                java -Xmx3g -Djdk.attach.allowAttachSelf=true -cp "$jar" dev.fencing.benchmarks.InMemoryFootprint 1000000 \
                  | tee "$logs/footprint.txt" ;;
    jdbc)       for db in ${DATABASES:-postgresql mariadb}; do # each shape and mode against its unfenced one, one database a run
                  RATIOS=()
                  modes=(Fenced)
                  [ "$db" = mariadb ] || modes+=(FencedAtCommit) # MariaDB's store refuses checkAtCommit
                  for shape in insert fourStatements; do
                    for mode in "${modes[@]}"; do
                      RATIOS+=(--ratio "$shape$mode[database=$db]/${shape}Unfenced[database=$db]")
                    done
                  done
                  if [ "$db" = mariadb ]; then
                    rounds jdbc-$db 4 'JdbcFenceBenchmark\.(insert|fourStatements)(Unfenced|Fenced)$' -p database=$db \
                      -f 1 -wi 1 -w 3 -i 2 -r 4
                  else
                    rounds jdbc-$db 4 JdbcFenceBenchmark -p database=$db -f 1 -wi 1 -w 3 -i 2 -r 4
                  fi
                done ;;
    checkstmt)  RATIOS=()
                for db in postgresql mariadb; do
                  RATIOS+=(--ratio "floorProbeHit[database=$db]#p50/noFamily[database=$db]#p50"
                           --ratio "noFamily[database=$db]#p50/previousRelease[database=$db]#p50")
                done
                rounds jdbc-check-statement 3 JdbcCheckStatementBenchmark -f 1 -wi 1 -w 2 -i 2 -r 2 ;;
    r2dbc)      RATIOS=(--ratio "r2dbcTwoStatements#p50/r2dbcThreeStatements#p50"
                        --ratio "jdbcTwoStatementsOneText#p50/jdbcThreeStatementsOneText#p50")
                rounds r2dbc-check 3 '(R2dbcCheckBenchmark|JdbcBoundedCheckBenchmark)' -f 1 -wi 1 -w 2 -i 2 -r 3 ;;
    tablesize)  run scale-jdbc-postgresql JdbcFenceTableSizeBenchmark -f 1 -wi 1 -w 5 -i 3 -r 5 ;;
    pgbench)    echo "== pgbench: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" \
                  | tee -a "$logs/load.txt"
                fencing-benchmarks/pgbench/run.sh 20 | tee "$logs/pgbench.txt" "$out/pgbench$suffix.txt" ;;
    request)    RATIOS=()
                for mode in default check-at-commit; do
                  RATIOS+=(--ratio "fencedThroughput[storeMode=$mode]/unfencedThroughput[storeMode=$mode]"
                           --ratio "fencedLatency[storeMode=$mode]#p50/unfencedLatency[storeMode=$mode]#p50"
                           --ratio "fencedLatency[storeMode=$mode]#p99/unfencedLatency[storeMode=$mode]#p99")
                done
                rounds whole-request 3 'WholeRequestBenchmark\.(un)?fenced' -f 1 -wi 1 -w 3 -i 2 -r 3 ;;
    paired)     RATIOS=() # fenced and unfenced clients at once, in one application (JMH groups)
                for mode in default check-at-commit; do
                  RATIOS+=(--ratio "pairedFencedThroughput[storeMode=$mode]/pairedUnfencedThroughput[storeMode=$mode]"
                           --ratio "pairedFencedLatency[storeMode=$mode]#p50/pairedUnfencedLatency[storeMode=$mode]#p50"
                           --ratio "pairedFencedLatency[storeMode=$mode]#p99/pairedUnfencedLatency[storeMode=$mode]#p99")
                done
                rounds whole-request-paired 5 'WholeRequestBenchmark\.paired' -f 1 -wi 1 -w 3 -i 2 -r 3 ;;
    profile)    # where the time of one call goes: async-profiler (Maven Central, tools.profiler:async-profiler), itimer
                # sampling (no perf events needed), collapsed stacks summed by part of the call (ProfileSummary)
                ap=fencing-benchmarks/target/async-profiler
                if [ ! -f "$ap/linux-x64/libasyncProfiler.so" ]; then
                  mvn -q -B dependency:copy -Dartifact=tools.profiler:async-profiler:4.2:jar:linux-x64 \
                    -DoutputDirectory="$ap" >/dev/null
                  (cd "$ap" && unzip -q -o async-profiler-4.2-linux-x64.jar)
                fi
                echo "== profile: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$logs/load.txt"
                rm -rf "$logs/profile"
                java -jar "$jar" 'FenceOverheadBenchmark.(proxyFenced|proxyNoOpMethodInterceptor|wovenFenced)$' \
                  -f 1 -wi 2 -w 2 -i 3 -r 3 \
                  -prof "async:libPath=$PWD/$ap/linux-x64/libasyncProfiler.so;event=itimer;interval=100000;output=collapsed;dir=$logs/profile" \
                  > "$logs/profile.txt" 2>&1
                java -cp "$jar" dev.fencing.benchmarks.ProfileSummary "$logs"/profile/*/collapsed-itimer.csv \
                  | sed "s|$logs/profile/dev.fencing.benchmarks.||" | tee "$out/profile$suffix.txt" ;;
    issuers)    run issuers IssuerBenchmark ;;
    reactive)   run reactive-fence ReactiveFenceBenchmark -prof gc -f 1 -wi 3 -i 5 -w 2 -r 2 ;;
    leasequeue) run jdbc-issuer-contention JdbcIssuerContentionBenchmark ;; # eight threads on one database lease (PostgreSQL)
    origins)    run transaction-origins TransactionOriginsBenchmark -prof gc -f 2 -wi 3 -w 1 -i 5 -r 1 ;; # listening to transaction managers
    *)          echo "unknown step: $step" >&2; exit 2 ;;
  esac
done

#!/usr/bin/env bash
# Prints one Markdown table row per run from its summary.json (and history.jsonl beside it): what
# docs/verification.md shows for the long runs. Needs jq.
set -euo pipefail
echo "| issuer | store | nemesis | fence | verdict | run | operations | acknowledged | refused as stale | unknown | strikes | client processes | anomalies |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for summary in "$@"; do
  dir=$(dirname "$summary")
  stale=$(jq -c 'select(.type == "fail" and ((.reason // "") | startswith("stale")))' "$dir/history.jsonl" | wc -l)
  jq -r --arg stale "$stale" '
    [ .run.issuer, .run.store, .run.nemesis, .run.fence, "`" + .verdict + "`",
      ((.run["duration-s"] / 60 * 10 | round) / 10 | tostring) + " min",
      (.availability.all | .ok + .fail + .info | tostring), (.availability.all.ok | tostring), $stale,
      (.availability.all.info | tostring), (.run["nemesis-strikes"] | tostring),
      (.run["processes-started"] | tostring),
      (if .["anomaly-count"] == 0 then "none"
       else (.["anomalies-by-kind"] | to_entries | map("\(.value) \(.key)") | join(", ")) end) ]
    | "| " + join(" | ") + " |"' "$summary"
done

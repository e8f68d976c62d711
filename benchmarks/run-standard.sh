#!/usr/bin/env bash
# The standard benchmark set, printed as Markdown (what the README's performance section shows):
#   1. jiwarp bench beside the raw-TCP baseline in the same run: 64 KiB Write/Read/Send bandwidth with
#      CRC off and on, 64-octet message rate, 8-octet Send ping-pong, 1 and 1000 queue pairs;
#   2. the JMH microbenchmarks: CRC-32C, FPDU framing and deframing, DDP placement, end-to-end Write.
# Usage: benchmarks/run-standard.sh [seconds per bench run, default 10]   (after mvn -DskipTests package)
# Run it on a quiet machine: the figures are CPU-bound on two cores.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-10}
jiwarp=bin/jiwarp
jar=benchmarks/target/benchmarks.jar
[ -f cli/target/jiwarp.jar ] && [ -f "$jar" ] || { echo "build first: mvn -q -B -DskipTests package" >&2; exit 1; }

echo "## jiwarp bench beside raw TCP ($(nproc) cores, $(java -version 2>&1 | head -1))"
echo
run() {
  echo "\`bin/jiwarp bench $*\`"
  echo
  "$jiwarp" bench "$@" --markdown
  echo
}
run --baseline tcp -D "$seconds" -s 65536
run --baseline tcp -D "$seconds" -s 65536 --crc
run --baseline tcp -D "$seconds" -s 64
run --baseline tcp -D "$seconds" --lat --op send
run -D "$seconds" -s 65536 -t 16 --op write -q 1
run --baseline tcp -D "$seconds" -s 65536 -t 16 --op write -q 1000

echo "## JMH microbenchmarks"
echo
csv=$(mktemp)
java -jar "$jar" 'Crc32cBenchmark|FpduFramingBenchmark|PlacementBenchmark|WriteBandwidthBenchmark' \
  -rf csv -rff "$csv" >/dev/null
# One row per benchmark and parameter set: the payload counter in GB/s where there is one.
awk -F, '{ sub(/\r$/, "") }
  NR == 1 { for (i = 8; i <= NF; i++) { gsub(/"/, "", $i); sub(/^Param: /, "", $i); param[i] = $i }; next }
  { gsub(/"/, "") }
  $1 ~ /:(ulpduBytes|payloadBytes|writtenBytes|bytes)$/ || $1 ~ /Crc32c/ {
    name = $1; sub(/^org\.jiwarp\.benchmarks\./, "", name)
    params = ""; for (i = 8; i <= NF; i++) if ($i != "") params = params (params ? ", " : "") param[i] "=" $i
    if ($1 ~ /Bytes$/) printf "| %s | %s | %.2f GB/s | ± %.2f |\n", name, params, $5 / 1e9, $6 / 1e9
    else printf "| %s | %s | %.0f %s | ± %.0f |\n", name, params, $5, $7, $6
  }' "$csv" | { echo "| benchmark | parameters | score | error (99.9%) |"; echo "|---|---|---:|---:|"; cat; }
rm -f "$csv"

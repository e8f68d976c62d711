#!/usr/bin/env bash
# Compares the working tree's jiwarp with an earlier revision, the way a data-path change is judged:
# REV is built in a git worktree beside this one, and each bench row is run on the two builds
# alternately (base, then this tree, RUNS times), each run beside the raw-TCP baseline in the same
# process. Prints, per row and build, the median and range of jiwarp's figure, TCP's and their ratio.
#
# Usage: benchmarks/compare.sh REV [runs, default 3] [seconds per run, default 4]
#   ROWS='write-64k write-64k-crc read-64 send-lat' (the default; see row() below for each)
#   JIWARP_JAVA_OPTS is passed to both builds.
# Run it on a quiet machine: the figures are CPU-bound on two cores, and a busy neighbour moves them
# by more than most changes do.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rev=${1:?usage: benchmarks/compare.sh REV [runs] [seconds]}
runs=${2:-3}
seconds=${3:-4}
rows=${ROWS:-write-64k write-64k-crc read-64 send-lat}

work=$(mktemp -d /tmp/jiwarp-compare.XXXXXX)
base_tree="$work/base"
cleanup() {
  git worktree remove --force "$base_tree" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "compare: building this tree and $rev (in $base_tree)" >&2
mvn -q -B -DskipTests package -pl cli -am >/dev/null
cp cli/target/jiwarp.jar "$work/head.jar"
git worktree add --detach "$base_tree" "$rev" >/dev/null 2>&1
(cd "$base_tree" && mvn -q -B -DskipTests package -pl cli -am >/dev/null)
cp "$base_tree/cli/target/jiwarp.jar" "$work/base.jar"
base_name=$(git rev-parse --short "$rev")
head_name="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!benchmarks' || echo '+changes')"

# The bench arguments of a row, and which figure it reads: bandwidth (Gb/s), rate (messages/s) or
# p50 latency (us, lower is better).
row() {
  case "$1" in
    write-64k) echo "--op write -s 65536|gbitPerSecond" ;;
    write-64k-crc) echo "--op write -s 65536 --crc|gbitPerSecond" ;;
    read-64k) echo "--op read -s 65536|gbitPerSecond" ;;
    read-64) echo "--op read -s 64|messagesPerSecond" ;;
    send-lat) echo "--op send --lat|p50" ;;
    *) echo "compare: unknown row $1" >&2; exit 2 ;;
  esac
}

# One run: prints "jiwarp tcp ratio" for the row's figure.
measure() {
  local jar=$1 args=$2 figure=$3 json
  # shellcheck disable=SC2086
  json=$(java ${JIWARP_JAVA_OPTS:-} -jar "$jar" bench --baseline tcp -D "$seconds" $args --json 2>/dev/null)
  python3 - "$figure" "$json" <<'EOF'
import json, sys
figure, doc = sys.argv[1], json.loads(sys.argv[2])
value = {}
for r in doc["results"]:
    v = r["latencyMicros"]["p50"] if figure == "p50" else r[figure]
    value[r["stack"]] = v
j, t = value["jiwarp"], value["tcp"]
ratio = j / t if figure != "p50" else j / t
print(f"{j:.4f} {t:.4f} {ratio:.4f}")
EOF
}

summary() {
  # stdin: one number per line; prints "median (min-max)".
  sort -g | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.3g (%.3g-%.3g)", m, v[1], v[NR] }'
}

printf '| row | build | jiwarp | tcp | ratio |\n|---|---|---:|---:|---:|\n'
for name in $rows; do
  spec=$(row "$name")
  args=${spec%|*}
  figure=${spec#*|}
  : > "$work/base.txt"
  : > "$work/head.txt"
  for ((i = 1; i <= runs; i++)); do
    measure "$work/base.jar" "$args" "$figure" >> "$work/base.txt"
    measure "$work/head.jar" "$args" "$figure" >> "$work/head.txt"
  done
  for build in base head; do
    label=$([ "$build" = base ] && echo "$base_name" || echo "$head_name")
    file="$work/$build.txt"
    printf '| %s (%s) | %s | %s | %s | %s |\n' "$name" "$figure" "$label" \
      "$(cut -d' ' -f1 "$file" | summary)" "$(cut -d' ' -f2 "$file" | summary)" "$(cut -d' ' -f3 "$file" | summary)"
  done
done

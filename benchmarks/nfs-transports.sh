#!/usr/bin/env bash
# NFSv3 over RPC-over-RDMA against NFSv3 over TCP, on the same jiwarp server over loopback: one
# `jiwarp nfs serve` of a fresh directory, and `jiwarp nfs put` (sequential WRITE) and `jiwarp nfs
# cat` (sequential READ) of one file, 1 MiB rsize/wsize, over each transport in turn (RDMA, then
# TCP, RUNS times, so a drift of the machine falls on both). Prints per operation and transport the
# median and range of the client's MB/s, and the median of the RDMA/TCP ratios of the runs.
#
# Usage: benchmarks/nfs-transports.sh [runs, default 3] [MiB, default 1024]
#   JIWARP_JAVA_OPTS is passed to the server and the clients.
# The server and each client are separate JVMs, as a user runs them; the file is random octets,
# read back and compared each run. Needs cli/target/jiwarp.jar (`mvn -q -DskipTests package`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-3}
mib=${2:-1024}
jar=cli/target/jiwarp.jar
[ -f "$jar" ] || { echo "nfs-transports: build first: mvn -q -DskipTests package" >&2; exit 1; }

work=$(mktemp -d /tmp/jiwarp-nfs-transports.XXXXXX)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
jiwarp() {
  # shellcheck disable=SC2086
  java ${JIWARP_JAVA_OPTS:-} -jar "$jar" "$@"
}
serve() {
  # shellcheck disable=SC2086
  exec java ${JIWARP_JAVA_OPTS:-} -jar "$jar" nfs serve "$@"
}

mkdir "$work/export"
head -c "${mib}M" /dev/urandom > "$work/source"
serve "$work/export" --bind 127.0.0.1 --port 0 --tcp-port 0 --mount-port 0 > /dev/null 2> "$work/server.log" &
server=$!
for _ in $(seq 100); do
  grep -q '^serving ' "$work/server.log" && break
  kill -0 "$server" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.1
done
line=$(grep -m1 '^serving ' "$work/server.log") || { echo "nfs-transports: the server did not start" >&2; exit 1; }
# "serving DIR: NFSv3 over RDMA on H:P, over TCP on H:T, MOUNT on TCP H:M"
port() { sed -n "s/.*$1 [0-9.]*:\([0-9]*\).*/\1/p" <<< "$line"; }
rdma=$(port 'over RDMA on'); tcp=$(port 'over TCP on'); mount=$(port 'MOUNT on TCP')
[ -n "$rdma" ] && [ -n "$tcp" ] && [ -n "$mount" ] || { echo "nfs-transports: cannot read the ports from: $line" >&2; exit 1; }
echo "nfs-transports: $line; ${mib} MiB, $runs runs" >&2

remote="127.0.0.1:$work/export/file"
mbps() { sed -n 's/.*(\([0-9.]*\) MB\/s).*/\1/p'; }
for run in $(seq "$runs"); do
  for transport in rdma tcp; do
    flags=(--port "$rdma" --tcp-port "$tcp" --mount-port "$mount")
    [ "$transport" = tcp ] && flags+=(--tcp)
    rm -f "$work/export/file" "$work/back"
    w=$(jiwarp nfs put "$work/source" "$remote" "${flags[@]}" 2>&1 >/dev/null | mbps)
    r=$(jiwarp nfs cat "$remote" -o "$work/back" "${flags[@]}" 2>&1 >/dev/null | mbps)
    cmp -s "$work/source" "$work/back" || { echo "nfs-transports: run $run over $transport read back other octets" >&2; exit 1; }
    echo "$w" >> "$work/write-$transport"
    echo "$r" >> "$work/read-$transport"
    echo "nfs-transports: run $run, $transport: WRITE $w MB/s, READ $r MB/s" >&2
  done
done

summary() {
  sort -g | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.0f (%.0f-%.0f)", m, v[1], v[NR] }'
}
ratio() {
  paste "$work/$1-rdma" "$work/$1-tcp" | awk '{ print $1 / $2 }' | sort -g | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2f (%.2f-%.2f)", m, v[1], v[NR] }'
}
printf '| %s MiB, 1 MiB rsize/wsize | RDMA MB/s | TCP MB/s | RDMA / TCP |\n|---|---:|---:|---:|\n' "$mib"
for op in write read; do
  printf '| sequential %s | %s | %s | %s |\n' "$(tr a-z A-Z <<< "$op")" "$(summary < "$work/$op-rdma")" \
    "$(summary < "$work/$op-tcp")" "$(ratio "$op")"
done

#!/usr/bin/env bash
# Issue 35's second point on a machine of 2 or 4 GPUs, one call, from the repo root with D
# (default .gpu-sub: bin/genie, bin/genie-bench, COMMIT) unpacked there: `genie serve` of the
# SIFT-like 4.5 M index (genie-bench --mode write-keywords, 237 x 67, seed 1) on 1, 2 and (with
# four) 4 GPUs, pinned to the first half of the host's cores, under `genie-bench --mode
# serve-client` pinned to the other half (the load generator in its own process): closed loops of
# 1, 1,024 and 4,096 clients over loopback, SECS seconds each (default 7), every answer checked,
# and the server's CPU seconds per query (utime + stime from /proc) for each level.
# First (PARTS_ONLY=1: only) where a served query's host time goes: genie-bench --mode transport-parts
# and the server's CPU a query on one core over a 2,000-object CPU index.
# Writes $OUT/transport-summary.txt and logs.tgz (the server logs, each level's CSV and log).
set -uo pipefail
D=${D:-.gpu-sub}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-transport; rm -rf "$d"; mkdir -p "$d"
sum="$res/transport-summary.txt"
export RUST_LOG=${RUST_LOG:-warn}
ulimit -n 65536 2>/dev/null || ulimit -n 16384 2>/dev/null || true
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee "$sum"
n=$(nproc); half=$((n / 2)); ngpu=$(nvidia-smi -L | wc -l)
echo "host cores: $n (server on 0-$((half - 1)), client on $half-$((n - 1))); commit: $(cat $D/COMMIT)" | tee -a "$sum"
$D/bin/genie-bench --mode write-keywords --objects 4500000 --dims 237 --values 67 --queries 1024 --seed 1 --formats npy --out "$d/w" > "$d/write.log" 2>&1 || cat "$d/write.log"
$D/bin/genie --quiet build --input "$d/w" --output "$d/sift.genie" 2>&1 | tail -2
ticks=$(getconf CLK_TCK)
# where a served query's host time goes: the server's own steps timed in-process on one core
# (JSON decode, the service, the answer's JSON), and the whole server's CPU a query on one core
# over a 2,000-object index on the CPU (its search costs little: what is left is HTTP)
$D/bin/genie-bench --mode write-keywords --objects 2000 --dims 237 --values 67 --queries 1024 --seed 1 --formats npy --out "$d/t" > /dev/null 2>&1
$D/bin/genie --quiet build --input "$d/t" --output "$d/tiny.genie" 2>&1 | tail -2
taskset -c 0 $D/bin/genie-bench --mode transport-parts --index "$d/sift.genie" --queries "$d/w/queries.txt" --device gpu --repeats 3 2>&1 | tail -1 | tee -a "$sum"
taskset -c 0 $D/bin/genie-bench --mode transport-parts --index "$d/tiny.genie" --queries "$d/t/queries.txt" --repeats 3 2>&1 | tail -1 | tee -a "$sum"
taskset -c 0 $D/bin/genie serve --index t="$d/tiny.genie" --device cpu --listen 127.0.0.1:7712 2> "$d/serve-tiny.log" &
pid=$!
for _ in $(seq 1 300); do grep -q listening "$d/serve-tiny.log" && break; sleep 0.2; done
for c in 1 64; do
  cpu0=$(awk '{print $14 + $15}' /proc/$pid/stat)
  taskset -c 1-$((half - 1)) timeout 60 $D/bin/genie-bench --mode serve-client \
    --url http://127.0.0.1:7712/v1/indexes/t/search --queries "$d/t/queries.txt" \
    --clients "$c" --seconds 5 --threads 4 --label "tiny cpu" > "$d/client-tiny-$c.log" 2>&1
  cpu1=$(awk '{print $14 + $15}' /proc/$pid/stat)
  line=$(grep -E "^tiny cpu +closed" "$d/client-tiny-$c.log" | tail -1 | cut -c1-120)
  reqs=$(echo "$line" | awk '{print $7}')
  per=$(python3 -c "r = max(1, ${reqs:-0}); print(f'{($cpu1 - $cpu0) / $ticks / (r * 6 / 5 + 1024) * 1e6:.1f}')")
  echo "$line | server on 1 core, CPU ${per} us/query" | tee -a "$sum"
done
kill -TERM "$pid"; wait "$pid" 2> /dev/null
[ -n "${PARTS_ONLY:-}" ] && exit 0
sets="0 0,1"; [ "$ngpu" -ge 4 ] && sets="0 0,1 0,1,2,3"
for set in $sets; do
  g=$(echo "$set" | tr ',' '\n' | wc -l)
  taskset -c 0-$((half - 1)) $D/bin/genie serve --index sift="$d/sift.genie" --device gpu --devices "$set" \
    --listen 127.0.0.1:7711 --max-queries 100000 2> "$d/serve-$g.log" &
  pid=$!
  for _ in $(seq 1 300); do grep -q listening "$d/serve-$g.log" && break; sleep 0.2; done
  for c in 1 1024 4096; do
    cpu0=$(awk '{print $14 + $15}' /proc/$pid/stat)
    taskset -c $half-$((n - 1)) timeout 120 $D/bin/genie-bench --mode serve-client \
      --url http://127.0.0.1:7711/v1/indexes/sift/search --queries "$d/w/queries.txt" \
      --clients "$c" --seconds "${SECS:-7}" --threads "$half" --label "$g GPU" \
      --csv "$d/client-$g-$c.csv" > "$d/client-$g-$c.log" 2>&1
    cpu1=$(awk '{print $14 + $15}' /proc/$pid/stat)
    line=$(grep -E "^$g GPU +closed" "$d/client-$g-$c.log" | tail -1 | cut -c1-120)
    reqs=$(echo "$line" | awk '{print $7}')
    # the server's CPU time over the queries it answered in the whole client run: the first
    # pass (each distinct query once), the 1 s warm-up (at about the measured rate) and the level
    secs=${SECS:-7}
    per=$(python3 -c "r = max(1, ${reqs:-0}); print(f'{($cpu1 - $cpu0) / $ticks / (r * ($secs + 1) / $secs + 1024) * 1e6:.1f}')")
    echo "$line | server CPU ${per} us/query" | tee -a "$sum"
  done
  kill -TERM "$pid"; wait "$pid" 2> /dev/null
done
tar czf "$res/logs.tgz" -C "$d" $(cd "$d" && ls serve-*.log client-*) 2> /dev/null

#!/usr/bin/env bash
# Issue 15, point 3, on the GPU machine: a parted index three times the memory its search may use.
# OBJECTS (default 10,000,000) x DIMS (128) attributes x VALUES (64) values, written by
# genie-bench --mode write-keywords as a NumPy pair (seed 1) and built in PARTS (default 8) parts;
# then `genie search` of QUERIES (default 1,024) at k 100, on the CPU and on the GPU, inside a
# memory cgroup capped at a third of the index's bytes (v2 memory.max, else v1
# memory.limit_in_bytes), the parts' pages dropped from the page cache first (dd iflag=nocache) so
# that the capped search reads them itself. Reports wall, peak RSS (/usr/bin/time), the cgroup's
# peak, and whether the answers equal an uncapped run's. Writes $OUT/capped-summary.txt.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"; sum="$res/capped-summary.txt"
d=/tmp/genie-capped; rm -rf "$d"; mkdir -p "$d"
g=$(pwd)/.gpu/bin/genie; gb=$(pwd)/.gpu/bin/genie-bench
n=${OBJECTS:-10000000}; parts=${PARTS:-8}; nq=${QUERIES:-1024}
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -df "$f" && chmod +x "${f%.xz}"; done
source "$(dirname "$0")/timing.sh"
echo "host: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; kernel $(uname -r); commit $(cat .gpu/COMMIT 2>/dev/null)" | tee "$sum"
t0=$(now)
$gb --mode write-keywords --objects "$n" --dims "${DIMS:-128}" --values "${VALUES:-64}" --queries "$nq" --seed 1 --formats npy --out "$d/w" > "$d/write.log" 2>&1 || cat "$d/write.log"
$g --quiet build --input "$d/w" --output "$d/i.genie" --parts "$parts" 2> "$d/build.log" || cat "$d/build.log"
rm -f "$d/w"/*.npy
bytes=$(cat "$d"/i.genie* | wc -c)
cap=$((bytes / 3))
echo "index: $parts parts, $bytes bytes in all, written and built in $(since "$t0") ms; cap $cap bytes (a third)" | tee -a "$sum"
# the cgroup: v2 (a leaf under the root, memory enabled for children), else v1
cg=""; procs=""
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  mkdir -p /sys/fs/cgroup/genie-cap 2>/dev/null
  echo "+memory" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
  if echo "$cap" > /sys/fs/cgroup/genie-cap/memory.max 2>/dev/null; then
    echo 0 > /sys/fs/cgroup/genie-cap/memory.swap.max 2>/dev/null
    cg=/sys/fs/cgroup/genie-cap; procs=$cg/cgroup.procs; peak=$cg/memory.peak
  fi
fi
if [ -z "$cg" ] && [ -d /sys/fs/cgroup/memory ]; then
  mkdir -p /sys/fs/cgroup/memory/genie-cap 2>/dev/null
  if echo "$cap" > /sys/fs/cgroup/memory/genie-cap/memory.limit_in_bytes 2>/dev/null; then
    cg=/sys/fs/cgroup/memory/genie-cap; procs=$cg/cgroup.procs; peak=$cg/memory.max_usage_in_bytes
  fi
fi
echo "cgroup: ${cg:-none could be made (no writable memory controller): the capped runs are left out}" | tee -a "$sum"
for dev in cpu gpu; do
  RUST_LOG=warn /usr/bin/time -f "%e %M" -o "$d/t" $g --quiet search --device $dev --index "$d/i.genie" --queries "$d/w/queries.txt" --k 100 --output "$d/free-$dev.jsonl"
  echo "$dev, uncapped (page cache warm): $(tail -1 "$d/t" | awk '{printf "%s s, peak RSS %d MB", $1, $2/1024}')" | tee -a "$sum"
  [ -n "$cg" ] || continue
  for f in "$d"/i.genie*; do dd if="$f" iflag=nocache count=0 status=none; done
  [ -w "$cg/memory.peak" ] && echo 0 > "$cg/memory.peak" 2>/dev/null
  [ -w "$cg/memory.max_usage_in_bytes" ] && echo 0 > "$cg/memory.max_usage_in_bytes" 2>/dev/null
  bash -c "echo \$\$ > $procs && exec /usr/bin/time -f '%e %M' -o $d/t $g --quiet search --device $dev --index $d/i.genie --queries $d/w/queries.txt --k 100 --output $d/cap-$dev.jsonl" 2> "$d/cap-$dev.err"
  rc=$?
  same=$(cmp -s "$d/free-$dev.jsonl" "$d/cap-$dev.jsonl" && echo yes || echo NO)
  echo "$dev, capped at $((cap >> 20)) MiB: exit $rc, $(tail -1 "$d/t" | awk '{printf "%s s, peak RSS %d MB", $1, $2/1024}'), cgroup peak $(( $(cat "$peak" 2>/dev/null || echo 0) >> 20 )) MiB, answers equal the uncapped run's: $same" | tee -a "$sum"
  tail -3 "$d/cap-$dev.err" | tee -a "$sum"
done
cmp -s "$d/free-cpu.jsonl" "$d/free-gpu.jsonl" && echo "GPU == CPU: yes" | tee -a "$sum" || echo "GPU == CPU: NO" | tee -a "$sum"
[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
rm -rf "$d"

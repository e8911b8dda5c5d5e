#!/usr/bin/env bash
# Issue 35 on a machine of 2 or 4 GPUs (nvidia-h100-x2 .. nvidia-h200-x4), one call, from the repo
# root
# with D (default .gpu-sub: bin/genie, bin/genie-bench, COMMIT) unpacked there:
#   1. the server: genie-bench --mode serve on the SIFT-like 4.5 M index, replicas on 1, 2 and
#      (with four) 4 GPUs, each under the greedy and the cohort dispatch (the same index, the same run), closed
#      loops of 1, 1,024 and 4,096 clients over loopback (SECS seconds each, default 8), every
#      answer checked;
#   2. the CLI: `genie search` of a 1 M SIFT-like index (genie-bench --mode write-keywords, seed
#      1) with 1,024 and 65,536 queries at k 100, on the CPU, on 1, 2 and 4 GPUs and with the
#      default placement, and on 2 and 4 GPUs under the greedy dispatch (the rule before the
#      cohort one): whole commands (best and median of RUNS, default 2) and the search stage of a
#      -v run; every output compared with the one GPU's.
# SKIP_SERVE=1 runs the CLI part alone. Writes $OUT/scaling-summary.txt, $OUT/serve-scaling.csv
# and the logs.
set -uo pipefail
D=${D:-.gpu-sub}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-scale; rm -rf "$d"; mkdir -p "$d"
sum="$res/scaling-summary.txt"
runs=${RUNS:-2}
export RUST_LOG=${RUST_LOG:-warn}
ulimit -n 65536 2>/dev/null || ulimit -n 16384 2>/dev/null || true
source "$(dirname "$0")/timing.sh"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat $D/COMMIT); open files: $(ulimit -n)" | tee -a "$sum"
ngpu=$(nvidia-smi -L | wc -l)
sets="0;0,1"; [ "$ngpu" -ge 4 ] && sets="0;0,1;0,1,2,3"

if [ -z "${SKIP_SERVE:-}" ]; then
echo "== server: GPU sets $sets x greedy, cohort" | tee -a "$sum"
timeout 480 $D/bin/genie-bench --mode serve --device gpu --device-sets "$sets" \
  --dispatch greedy,cohort --clients 1,1024,4096 --seconds "${SECS:-8}" \
  --csv "$res/serve-scaling.csv" > "$res/serve-scaling.log" 2>&1
echo "serve exit $?" | tee -a "$sum"
grep -E "^(config|[124] GPU|CPU)" "$res/serve-scaling.log" | cut -c1-150 | tee -a "$sum"
fi

echo "== CLI: 1 M SIFT-like, k 100" | tee -a "$sum"
G=$D/bin/genie
$D/bin/genie-bench --mode write-keywords --objects 1000000 --queries 65536 --seed 1 --formats text --out "$d/w" > "$d/write.log" 2>&1 || cat "$d/write.log"
$G --quiet build --input "$d/w/objects.txt" --output "$d/i.genie"
head -1024 "$d/w/queries.txt" > "$d/q1k.txt"
cp "$d/w/queries.txt" "$d/q64k.txt"
for q in q1k q64k; do
  for place in "cpu:--device cpu" "gpu1:--device gpu --devices 0" "gpu2:--device gpu --devices 0,1" \
               "gpu4:--device gpu --devices 0,1,2,3" "gpu2-greedy:--device gpu --devices 0,1 --dispatch greedy" \
               "gpu4-greedy:--device gpu --devices 0,1,2,3 --dispatch greedy" "default:"; do
    tag=${place%%:*}; flags=${place#*:}
    case "$tag" in gpu4*) [ "$ngpu" -ge 4 ] || continue;; esac
    # shellcheck disable=SC2086 # the flags are words
    env -u RUST_LOG $G -v search $flags --index "$d/i.genie" --queries "$d/$q.txt" --k 100 --output "$d/o-$q-$tag.jsonl" > "$d/v-$q-$tag.log" 2>&1
    stage=$(grep -oE "search [0-9.]+ ms" "$d/v-$q-$tag.log" | head -1)
    backend=$(grep -oE "backend: [^(]*" "$d/v-$q-$tag.log" | head -1)
    grep -oE "device auto: .*" "$d/v-$q-$tag.log" | head -1 | sed 's/^/    /' | tee -a "$sum"
    # shellcheck disable=SC2086
    wall=$(walls "$runs" $G --quiet search $flags --index "$d/i.genie" --queries "$d/$q.txt" --k 100 --output "$d/o2.jsonl")
    same=$(cmp -s "$d/o-$q-$tag.jsonl" "$d/o-$q-gpu1.jsonl" 2>/dev/null && echo same || echo "DIFFERS")
    [ "$tag" = cpu ] && same="(reference next)"
    echo "$q $tag: whole $wall; stage $stage; $backend; $same" | tee -a "$sum"
  done
  cmp -s "$d/o-$q-cpu.jsonl" "$d/o-$q-gpu1.jsonl" && echo "$q cpu == gpu1: yes" | tee -a "$sum" || echo "$q cpu == gpu1: NO" | tee -a "$sum"
done
tar czf "$res/verbose-logs.tgz" -C "$d" $(cd "$d" && ls v-*.log) 2>/dev/null

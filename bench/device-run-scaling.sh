#!/usr/bin/env bash
# Issue 35 on a machine of 2 or 4 GPUs (nvidia-h100-x2 .. nvidia-h200-x4), one call, from the repo
# root
# with D (default .gpu-sub: bin/genie, bin/genie-bench, COMMIT) unpacked there:
#   1. the server: genie-bench --mode serve on the SIFT-like 4.5 M index, replicas on 1, 2 and
#      (with four) 4 GPUs, each under the greedy and the cohort dispatch (the same index, the same run), closed
#      loops of 1, 1,024 and 4,096 clients over loopback (SECS seconds each, default 8), every
#      answer checked;
#   2. the CLI: `genie search` at k 100 of the WORKLOADS (default both): sift1m, a 1 M SIFT-like
#      index (genie-bench --mode write-keywords, seed 1) with 1,024 and 65,536 queries, and
#      big10m, 10 M x 128 (64 values) with 8,192 queries; on the CPU, on 1, 2 and 4 GPUs, with the
#      default placement (and with one GPU visible, as on a 1-GPU machine), and on 2 GPUs under
#      the greedy dispatch, and on 1 and 2 GPUs in chunks of 8,192: whole commands (best and median of RUNS, default 2), the search
#      stage and its stage times from a -v run; every output compared with the one GPU's.
# ALTERNATE=N also runs `--device cpu` and the default in turn N times each on 1,024 queries
# (medians); SIFT_SETS (default "q1k q64k") the query sets of the 1 M workload;
# SKIP_SERVE=1 runs the CLI part alone; PLACES (e.g. "cpu gpu1 gpu2 gpu4 default") keeps those
# placements alone. Writes $OUT/scaling-summary.txt, $OUT/serve-scaling.csv
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

G=$D/bin/genie
# cli NAME OBJECTS DIMS VALUES QUERIES QSETS: the workload written (seed 1) and built, then each
# queries set of QSETS (q1k, q8k, q64k: the first 1,024, 8,192 or 65,536 queries) searched at
# k 100 in every placement; the default also with one GPU visible (a 1-GPU machine)
cli() {
  local name=$1 n=$2 dims=$3 values=$4 nq=$5 qsets=$6 w="$d/$1"
  echo "== CLI: $name ($n objects, $dims x $values), k 100" | tee -a "$sum"
  $D/bin/genie-bench --mode write-keywords --objects "$n" --dims "$dims" --values "$values" --queries "$nq" --seed 1 --formats npy --out "$w" > "$d/write-$name.log" 2>&1 || cat "$d/write-$name.log"
  local t0; t0=$(now)
  $G --quiet build --input "$w" --output "$d/$name.genie" || { echo "build $name FAILED" | tee -a "$sum"; return; }
  echo "build $name: $(since "$t0") ms" | tee -a "$sum"
  for q in $qsets; do
    local nl; case $q in q1k) nl=1024;; q8k) nl=8192;; q64k) nl=65536;; esac
    head -"$nl" "$w/queries.txt" > "$d/$name-$q.txt"
    for place in "cpu:--device cpu" "gpu1:--device gpu --devices 0" "gpu2:--device gpu --devices 0,1" \
                 "gpu4:--device gpu --devices 0,1,2,3" "gpu2-greedy:--device gpu --devices 0,1 --dispatch greedy" \
                 "gpu1-b8k:--device gpu --devices 0 --batch-queries 8192" \
                 "gpu2-b8k:--device gpu --devices 0,1 --batch-queries 8192" \
                 "default:" "default-1gpu:"; do
      local tag=${place%%:*} flags=${place#*:} pre=()
      case " ${PLACES:-$tag} " in *" $tag "*) ;; *) continue;; esac
      case "$tag" in gpu4*) [ "$ngpu" -ge 4 ] || continue;; esac
      [ "$tag" = default-1gpu ] && pre=(CUDA_VISIBLE_DEVICES=0)
      local o="$d/o-$name-$q-$tag.jsonl" v="$d/v-$name-$q-$tag.log"
      # shellcheck disable=SC2086 # the flags are words
      env -u RUST_LOG "${pre[@]}" $G -v search $flags --index "$d/$name.genie" --queries "$d/$name-$q.txt" --k 100 --output "$o" > "$v" 2>&1
      local stage backend same wall
      stage=$(grep -oE "search [0-9.]+ ms" "$v" | head -1)
      backend=$(grep -oE "backend: [^(]*" "$v" | head -1)
      grep -oE "(device auto|GPUs?): .*" "$v" | head -2 | sed 's/^/    /' | tee -a "$sum"
      grep -oE "(stages|host): .*" "$v" | head -2 | sed 's/^/    /' | tee -a "$sum"
      # shellcheck disable=SC2086
      wall=$(walls "$runs" env "${pre[@]}" $G --quiet search $flags --index "$d/$name.genie" --queries "$d/$name-$q.txt" --k 100 --output "$d/o2.jsonl")
      same=$(cmp -s "$o" "$d/o-$name-$q-gpu1.jsonl" 2>/dev/null && echo same || echo "DIFFERS")
      [ "$tag" = cpu ] && same="(reference next)"
      echo "$name $q $tag: whole $wall; stage $stage; $backend; $same" | tee -a "$sum"
    done
    cmp -s "$d/o-$name-$q-cpu.jsonl" "$d/o-$name-$q-gpu1.jsonl" && echo "$name $q cpu == gpu1: yes" | tee -a "$sum" || echo "$name $q cpu == gpu1: NO" | tee -a "$sum"
    if [ -n "${ALTERNATE:-}" ] && [ "$q" = q1k ]; then  # --device cpu and the default in turn
      local tc="" td="" x
      for _ in $(seq "$ALTERNATE"); do
        x=$(now); $G --quiet search --device cpu --index "$d/$name.genie" --queries "$d/$name-$q.txt" --k 100 --output "$d/o2.jsonl"; tc="$tc $(since "$x")"
        x=$(now); $G --quiet search --index "$d/$name.genie" --queries "$d/$name-$q.txt" --k 100 --output "$d/o2.jsonl"; td="$td $(since "$x")"
      done
      med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
      echo "$name $q alternated x$ALTERNATE: cpu median $(echo "$tc" | med) ms, default median $(echo "$td" | med) ms (cpu:$tc; default:$td)" | tee -a "$sum"
    fi
    rm -f "$d"/o-"$name"-*.jsonl
  done
  rm -rf "$w" "$d/$name.genie"
}
for wl in ${WORKLOADS:-sift1m big10m}; do
  case $wl in
    sift1m) cli sift1m 1000000 237 67 65536 "${SIFT_SETS:-q1k q64k}";;
    big10m) cli big10m 10000000 128 64 8192 "q8k";;
  esac
done
tar czf "$res/verbose-logs.tgz" -C "$d" $(cd "$d" && ls v-*.log) 2>/dev/null

#!/usr/bin/env bash
# `genie search`'s search stage on 1, 2 and 4 GPUs of one machine (issue 35), builds and settings
# side by side in one call, from the repo root. VARIANTS: words "tag:DIR[:VAR=VALUE,...]", each
# the genie of DIR/bin (unpacked there) under those environment variables (default: the build
# in .gpu-new alone). The workload: the 1 M SIFT-like index (genie-bench --mode write-keywords,
# 237 x 67, seed 1) and its 65,536 queries at k 100, written and built by the first variant;
# OBJECTS, DIMS, VALUES and NQ set another (10 M x 128 of 64 values, 8,192 queries: the other
# workload of issue 35). Each variant on each GPU count runs RUNS times (default 3, in turn with the
# other variants, so that a drift of the host spreads over all): the whole command's wall time,
# and from its -v lines the search stage, the reader (lines read in order), and GPU 0's device
# and host times. Every output is compared with the first variant's on one GPU. Writes
# $OUT/TAG-summary.txt (a table at the end), $OUT/TAG.csv and the -v logs (TAG: cli-stage).
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-stage; rm -rf "$d"; mkdir -p "$d"
name=${TAG:-cli-stage}; sum="$res/$name-summary.txt" csv="$res/$name.csv"
runs=${RUNS:-3} nq=${NQ:-65536}
variants=(${VARIANTS:-new:.gpu-new})
source "$(dirname "$0")/timing.sh"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee "$sum"
ngpu=$(nvidia-smi -L | wc -l)
echo "host cores: $(nproc); GPUs: $ngpu; variants: ${variants[*]}" | tee -a "$sum"
for v in "${variants[@]}"; do
  IFS=: read -r tag dir _ <<< "$v"
  echo "  $tag: commit $(cat "$dir/COMMIT" 2>/dev/null)" | tee -a "$sum"
done
IFS=: read -r _ first _ <<< "${variants[0]}"
w="$d/sift1m"
t0=$(now)
"$first/bin/genie-bench" --mode write-keywords --objects "${OBJECTS:-1000000}" --dims "${DIMS:-237}" --values "${VALUES:-67}" \
  --queries "$nq" --seed 1 --formats npy --out "$w" > "$d/write.log" 2>&1 || cat "$d/write.log"
"$first/bin/genie" --quiet build --input "$w" --output "$d/i.genie" || { echo "build FAILED"; exit 1; }
echo "workload written and built in $(since "$t0") ms" | tee -a "$sum"
q="$w/queries.txt"
echo "variant,gpus,run,wall_ms,stage_ms,read_ms,lines_ms,match_ms,plan_ms,launch_ms,finish_ms,batches,same" > "$csv"
sets=(1 2); [ "$ngpu" -ge 4 ] && sets=(1 2 4)
num() { grep -oE "$1 [0-9.]+" "$2" | head -1 | awk '{print $NF}'; }
for r in $(seq "$runs"); do
  for g in "${sets[@]}"; do
    devs=$(seq -s, 0 $((g - 1)))
    for v in "${variants[@]}"; do
      IFS=: read -r tag dir envs flags <<< "$v"
      envs=(${envs//,/ }) flags=(${flags//,/ })
      o="$d/o-$tag-$g.jsonl" log="$d/v-$tag-$g-$r.log"
      t0=$(now)
      timeout 60 env -u RUST_LOG "${envs[@]}" "$dir/bin/genie" -v search --device gpu --devices "$devs" \
        "${flags[@]}" --index "$d/i.genie" --queries "$q" --k 100 --output "$o" > "$log" 2>&1 || echo "$tag $g FAILED"
      wall=$(since "$t0")
      same=$(cmp -s "$o" "$d/o-${variants[0]%%:*}-1.jsonl" && echo same || echo DIFFERS)
      echo "$tag,$g,$r,$wall,$(num 'search' "$log"),$(num 'read and parse' "$log"),$(num 'lines read' "$log"),$(num 'match' "$log"),$(num 'planning' "$log"),$(num 'launching' "$log"),$(num 'unpacking' "$log"),$(grep -oE '\([0-9]+ batches' "$log" | head -1 | tr -dc 0-9),$same" >> "$csv"
    done
  done
done
tar czf "$res/$name-logs.tgz" -C "$d" $(cd "$d" && ls v-*.log) 2>/dev/null
# the table: medians over the runs, and the speed-up of the stage over the variant's one GPU
python3 - "$csv" <<'EOF' | tee -a "$sum"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = lambda xs: statistics.median(float(x) for x in xs if x) if any(xs) else float("nan")
print(f"{'variant':<14}{'GPUs':>5}{'whole':>9}{'stage':>9}{'x 1 GPU':>8}{'read':>8}{'lines':>7}"
      f"{'match':>8}{'plan':>7}{'launch':>8}{'finish':>8}{'batches':>8}  same")
one = {}
for (v, g) in dict.fromkeys((r["variant"], r["gpus"]) for r in rows):
    rs = [r for r in rows if r["variant"] == v and r["gpus"] == g]
    m = {k: med([r[k] for r in rs]) for k in ("wall_ms", "stage_ms", "read_ms", "lines_ms",
                                              "match_ms", "plan_ms", "launch_ms", "finish_ms")}
    if g == "1":
        one[v] = m["stage_ms"]
    sp = one.get(v, float("nan")) / m["stage_ms"]
    same = "all" if all(r["same"] == "same" for r in rs) else "DIFFERS"
    print(f"{v:<14}{g:>5}{m['wall_ms']:>9.1f}{m['stage_ms']:>9.1f}{sp:>8.2f}{m['read_ms']:>8.1f}"
          f"{m['lines_ms']:>7.1f}{m['match_ms']:>8.1f}{m['plan_ms']:>7.1f}{m['launch_ms']:>8.1f}"
          f"{m['finish_ms']:>8.1f}{rs[0]['batches']:>8}  {same}")
EOF

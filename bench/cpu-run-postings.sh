#!/usr/bin/env bash
# Issue 37's CPU figure on this machine, from the repo root: `genie search --device cpu` of a
# SIFT-like index (genie-bench --mode write-keywords, 237 x 67, seed 1; OBJECTS, default
# 200,000) with NQ queries (default 256) at k = 100, RUNS times (default 9) in turn with the same
# command on the first query alone (the start-up: the process, the index opened, one query), and
# the postings the queries read counted from the written NumPy files. Prints the G postings/s a
# core with the start-up subtracted (best and median). GENIE (default target/release/genie) and
# BENCH (default target/release/genie-bench) name the binaries. SIMILAR=G: the queries in
# near-duplicate groups of G (each group's first query with one attribute's keyword taken from
# the query's own, as `genie-bench --mode cpu --similar`), where the CPU counts in cohorts.
set -euo pipefail
G=${GENIE:-target/release/genie} B=${BENCH:-target/release/genie-bench}
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
objects=${OBJECTS:-200000} nq=${NQ:-256} runs=${RUNS:-9}
"$B" --mode write-keywords --objects "$objects" --dims 237 --values 67 --queries "$nq" --seed 1 \
  --formats npy --out "$d/w" > /dev/null
"$G" --quiet build --input "$d/w" --output "$d/i.genie"
if [ "${SIMILAR:-0}" -gt 1 ]; then
  python3 - "$d/w/queries.txt" "$SIMILAR" <<'EOF2'
import sys
path, g = sys.argv[1], int(sys.argv[2])
qs = [line.split() for line in open(path)]
out = []
for i, own in enumerate(qs):
    q = list(qs[i // g * g])
    if q:
        at = i % len(q)
        if at < len(own):
            q[at] = own[at]
    out.append(" ".join(q))
open(path, "w").write("\n".join(out) + "\n")
EOF2
fi
head -1 "$d/w/queries.txt" > "$d/one.txt"
python3 - "$d" "$G" "$runs" "$(nproc)" <<'EOF'
import statistics, subprocess, sys, time
import numpy as np
d, genie, runs, cores = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
lengths = np.bincount(np.load(f"{d}/w/keywords.npy").astype(np.int64))
postings = 0
for line in open(f"{d}/w/queries.txt"):
    kws = np.array([int(t) for t in line.split()], dtype=np.int64)
    kws = kws[kws < len(lengths)]
    postings += int(lengths[kws].sum())
def run(queries):
    t = time.perf_counter()
    subprocess.run([genie, "--quiet", "search", "--device", "cpu", "--index", f"{d}/i.genie",
                    "--queries", queries, "--k", "100", "--output", f"{d}/o.jsonl"], check=True)
    return (time.perf_counter() - t) * 1e3
whole, start = [], []
for _ in range(runs):
    whole.append(run(f"{d}/w/queries.txt"))
    start.append(run(f"{d}/one.txt"))
best = min(whole) - min(start)
med = statistics.median(whole) - statistics.median(start)
rate = lambda ms: postings / (ms / 1e3) / cores / 1e9
print(f"{postings / 1e6:.1f} M postings; whole best {min(whole):.1f} ms, median "
      f"{statistics.median(whole):.1f}; one query best {min(start):.1f}, median "
      f"{statistics.median(start):.1f}; {cores} cores: {rate(best):.3f} G postings/s a core "
      f"(best), {rate(med):.3f} (median)")
EOF

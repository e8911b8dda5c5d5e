#!/usr/bin/env bash
# Issue 4 on the device (two GPUs when lent): tests, CLI multi-loading, multiload / scale /
# multigpu benchmarks. Run from the repo root after scripts/gpu/stage.
set -uo pipefail
out=${OUT:-/tmp/genie-out}
mkdir -p "$out"
export GENIE_LARGE_TESTS=1 GENIE_CACHE_DIR=/tmp/genie-cache RUST_LOG=${RUST_LOG:-info}
status=0
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
echo "== tests"
timeout 300 .gpu/run tests --test-threads 4 > "$out/tests.log" 2>&1 || status=1
grep -E "test result|skipped|FAILED|panicked" "$out/tests.log" | grep -v "0 passed" | tail -25
echo "== CLI: parted index on the GPU"
tmp=$(mktemp -d)
awk 'BEGIN{srand(3); for(i=0;i<300000;i++){s=""; for(d=0;d<16;d++) s=s" "(d*32+int(rand()*32)); print s}}' > "$tmp/o.txt"
awk 'BEGIN{srand(4); for(i=0;i<1000;i++){s=""; for(d=0;d<16;d++){v=d*32+int(rand()*32); s=s" "v}; print s}}' > "$tmp/q.txt"
.gpu/run bin genie build --input "$tmp/o.txt" --output "$tmp/one.genie" -q
.gpu/run bin genie build --input "$tmp/o.txt" --output "$tmp/p.genie" --parts 5 -q
.gpu/run bin genie search --index "$tmp/one.genie" --queries "$tmp/q.txt" --k 10 --device cpu -q > "$tmp/cpu.jsonl"
.gpu/run bin genie search --index "$tmp/p.genie" --queries "$tmp/q.txt" --k 10 --device gpu > "$tmp/gpu.jsonl" 2> "$tmp/gpu.err"; tail -2 "$tmp/gpu.err"
cmp -s "$tmp/cpu.jsonl" "$tmp/gpu.jsonl" && echo "CLI: parted GPU output identical to one-part CPU" || { echo "CLI: DIFFERS"; status=1; }
echo "== multiload (10M x 128 dims, 8 parts, 2.56 GB budget)"
timeout 240 .gpu/run bin genie-bench --mode multiload --parts 8 --budget-mb 2560 --queries 1024 --csv "$out/multiload.csv" 2>&1 | grep -v INFO | tail -14 || status=1
echo "== multigpu"
timeout 200 .gpu/run bin genie-bench --mode multigpu --parts 8 --queries 2048 2>&1 | grep -v INFO | tail -6 || status=1
echo "== scale (SIFT-like: 237 functions x 67 buckets, 1,024 queries)"
timeout 420 .gpu/run bin genie-bench --mode scale --dims 237 --values 67 --queries 1024 --csv "$out/scale.csv" 2>&1 | grep -v INFO | tail -7 || status=1
exit $status

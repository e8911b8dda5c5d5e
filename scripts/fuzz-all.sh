#!/usr/bin/env bash
# Runs every fuzz target of crates/genie-fuzz with cargo-fuzz (nightly), each until it reaches
# RUNS executions or SECONDS seconds, JOBS at a time, and prints one line per target:
#   target, executions, seconds, executions/s, crashes.
# Usage: scripts/fuzz-all.sh [SECONDS] [RUNS] [JOBS]   (defaults 3600 10000000 2)
# Built with optimizations, overflow checks on and no sanitizer (safe Rust: the sanitizer costs
# most of the speed); crashing inputs land in fuzz/artifacts/TARGET/; the corpora grow in fuzz/corpus/TARGET/.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3600}; runs=${2:-10000000}; jobs=${3:-2}
logs=${FUZZ_LOGS:-fuzz/logs}
mkdir -p "$logs"
cargo +nightly fuzz build -O -a -s none >/dev/null 2>&1 || { echo "cargo +nightly fuzz build failed"; exit 1; }
targets=$(cargo +nightly fuzz list)
# the valid inputs of each decoder (the smoke test's seeds) start every corpus
GENIE_FUZZ_SEEDS="$PWD/fuzz/corpus" cargo test -q -p genie-fuzz --test smoke seeds_as_files >/dev/null 2>&1 ||
  echo "warning: could not write the seed corpora"
run_one() {
  local t=$1
  mkdir -p "fuzz/corpus/$t"
  cargo +nightly fuzz run -O -a -s none "$t" -- -runs="$runs" -max_total_time="$secs" -malloc_limit_mb=512 \
    -rss_limit_mb=2048 -print_final_stats=1 > "$logs/$t.log" 2>&1
  echo "$t exit $?" >> "$logs/$t.log"
}
export -f run_one; export secs runs logs
printf '%s\n' $targets | xargs -P "$jobs" -I{} bash -c 'run_one {}'
printf '%-16s %12s %8s %10s %8s\n' target executions seconds exec/s crashes
for t in $targets; do
  f="$logs/$t.log"
  n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$f" | grep -o '[0-9]*$' | tail -1)
  s=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$f" | grep -o 'in [0-9]*' | grep -o '[0-9]*' | tail -1)
  crash=$(ls "fuzz/artifacts/$t" 2>/dev/null | grep -c -e crash -e oom -e leak -e timeout)
  rate=$(( ${n:-0} / ( ${s:-1} > 0 ? ${s:-1} : 1 ) ))
  printf '%-16s %12s %8s %10s %8s\n' "$t" "${n:-?}" "${s:-?}" "$rate" "$crash"
done

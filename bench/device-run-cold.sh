#!/usr/bin/env bash
# Issue 15 on the GPU machine, one call: the cold path of the keywords kind, page cache warm.
# genie-bench --mode write-keywords writes the SIFT-like workload (237 attributes x 67 values,
# seed 1; OBJECTS, default 1,000,000, and BIG, default 4,500,000, in binary only) as text, a
# NumPy CSR pair, Parquet and Arrow IPC; `genie build` from each (wall, MB/s of text, peak RSS,
# the BIG one from NumPy three times, and the disk's own write speed by dd for a file its size;
# the indexes compared byte for byte); `genie info` and `genie search --device gpu` on 1,024
# queries, whole-command wall times (best and median of RUNS, default 5), with one `-v` run's
# stage log (index mapped and checked, devices open, upload, search); the pinned host-to-device
# ceiling from `genie-bench --mode ceilings`; and with two GPUs, 8,192 queries on both (the
# default: a replica per GPU) against `--devices 0`. Run from the repo root after
# scripts/gpu/stage; writes $OUT/cold-summary.txt and the logs.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-cold; rm -rf "$d"; mkdir -p "$d"
g=.gpu/bin/genie; gb=.gpu/bin/genie-bench
sum="$res/cold-summary.txt"
n=${OBJECTS:-1000000}; big=${BIG:-4500000}; runs=${RUNS:-5}
export RUST_LOG=${RUST_LOG:-warn}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat .gpu/COMMIT 2>/dev/null)" | tee -a "$sum"
ngpu=$(nvidia-smi -L | wc -l)
source "$(dirname "$0")/timing.sh"
# whether two index files hold the same arrays (the metadata names the input file, so the
# header's checksums and the metadata differ)
same_arrays() {
  python3 - "$1" "$2" <<'PY'
import struct, sys
def arrays(p):
    b = open(p, "rb").read()
    ext = [struct.unpack_from("<QQ", b, 48 + 24 * i) for i in range(4)]
    return [b[a:a + n] for a, n in ext]
print("yes" if arrays(sys.argv[1]) == arrays(sys.argv[2]) else "NO")
PY
}
t0=$(now)
$gb --mode write-keywords --objects "$n" --queries 8192 --seed 1 --out "$d/w" > "$d/write.log" 2>&1 || cat "$d/write.log"
echo "workload: $n objects written in $(since "$t0") ms" | tee -a "$sum"
head -1024 "$d/w/queries.txt" > "$d/q1024.txt"
ls -l "$d/w" | tee -a "$sum"
echo "== build (wall; peak RSS)" | tee -a "$sum"
txt=$(stat -c %s "$d/w/objects.txt")
for input in "text:$d/w/objects.txt" "npy:$d/w" "parquet:$d/w/objects.parquet" "arrow:$d/w/objects.arrow"; do
  name=${input%%:*}; path=${input#*:}
  t0=$(now)
  RUST_LOG=genie=debug,genie_core=debug /usr/bin/time -f "%M" -o "$d/rss" $g --quiet build --input "$path" --output "$d/$name.genie" 2> "$d/build-$name.log"
  ms=$(since "$t0")
  extra=""; [ $name = text ] && extra=", $(python3 -c "print(f'{$txt / $ms / 1e3:.0f}')") MB/s of text"
  same=""; [ $name != text ] && same=", same arrays as text's: $(same_arrays "$d/$name.genie" "$d/text.genie")"
  echo "build $name: $ms ms$extra, peak RSS $(( $(cat "$d/rss") / 1024 )) MB$same" | tee -a "$sum"
  grep -E "DEBUG" "$d/build-$name.log" | sed 's/^.*\] /  /' | tail -6 | tee -a "$sum"
done
idx="$d/text.genie"
echo "index: $(stat -c %s "$idx") bytes" | tee -a "$sum"
echo "== genie info (whole command)" | tee -a "$sum"
echo "info: $(walls "$runs" $g info --index "$idx")" | tee -a "$sum"
echo "== genie search --device gpu, 1,024 queries, k 100 (whole command)" | tee -a "$sum"
dev0=""; [ "$ngpu" -gt 1 ] && dev0="--devices 0"
echo "search: $(walls "$runs" $g --quiet search --device gpu $dev0 --index "$idx" --queries "$d/q1024.txt" --k 100 --output "$d/o.jsonl")" | tee -a "$sum"
echo "search cpu: $(walls 1 $g --quiet search --device cpu --index "$idx" --queries "$d/q1024.txt" --k 100 --output "$d/oc.jsonl")" | tee -a "$sum"
cmp -s "$d/o.jsonl" "$d/oc.jsonl" && echo "GPU == CPU: yes" | tee -a "$sum" || echo "GPU == CPU: NO" | tee -a "$sum"
RUST_LOG=genie=debug,genie_core=trace $g -v search --device gpu $dev0 --index "$idx" --queries "$d/q1024.txt" --k 100 --output "$d/o.jsonl" > "$d/v.log" 2>&1
grep -E "mapped and checked|uploaded|context|CUDA driver|CUDA probe|backend:|stages:|host:|searched|dense keyword" "$d/v.log" | sed 's/^.*\] /  /' | tee -a "$sum"
echo "== pinned host-to-device ceiling" | tee -a "$sum"
timeout 120 $gb --mode ceilings 2>&1 | grep -iE "ceilings|h2d" | tee -a "$sum"
if [ "$ngpu" -gt 1 ]; then
  echo "== 8,192 queries, k 100: both GPUs (default) vs --devices 0 (search stage of -v)" | tee -a "$sum"
  for devs in "" "--devices 0"; do
    $g -v search --device gpu $devs --index "$idx" --queries "$d/w/queries.txt" --k 100 --output "$d/o8k.jsonl" > "$d/v8.log" 2>&1
    echo "devices ${devs:-all}: $(grep -oE 'backend: .*' "$d/v8.log" | head -1)" | tee -a "$sum"
    grep -E "stages: read|searched" "$d/v8.log" | sed 's/^.*\] /  /' | tee -a "$sum"
    cp "$d/o8k.jsonl" "$d/o8k-${devs:+one}.jsonl"
  done
  cmp -s "$d/o8k-.jsonl" "$d/o8k-one.jsonl" && echo "two GPUs == one: yes" | tee -a "$sum" || echo "two GPUs == one: NO" | tee -a "$sum"
fi
echo "== $big objects from binary input" | tee -a "$sum"
rm -rf "$d/w" "$d"/*.genie
$gb --mode write-keywords --objects "$big" --queries 16 --seed 1 --out "$d/b" --formats npy,parquet > "$d/write-big.log" 2>&1 || cat "$d/write-big.log"
for input in "npy:$d/b" "npy:$d/b" "npy:$d/b" "parquet:$d/b/objects.parquet"; do
  name=${input%%:*}; path=${input#*:}
  sync; t0=$(now)
  RUST_LOG=genie=debug,genie_core=debug /usr/bin/time -f "%M" -o "$d/rss" $g --quiet build --input "$path" --output "$d/big-$name.genie" 2> "$d/build-big-$name.log"
  echo "build $big from $name: $(since "$t0") ms, peak RSS $(( $(cat "$d/rss") / 1024 )) MB" | tee -a "$sum"
  grep -E "DEBUG" "$d/build-big-$name.log" | sed 's/^.*\] /  /' | tail -8 | tee -a "$sum"
  rm -f "$d/big-$name.genie"
done
# the disk's own write speed for a file of the index's size, in the same run: buffered with a
# sync at the end (what a save is), and with O_DIRECT
mb=$(( $(stat -c %s "$d/b/keywords.npy") >> 20 ))
for flags in "conv=fsync" "oflag=direct conv=fsync"; do
  disk_ceiling "$mb" "$d/dd.bin" "$flags" | tee -a "$sum"
done

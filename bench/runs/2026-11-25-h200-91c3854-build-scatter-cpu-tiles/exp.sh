#!/usr/bin/env bash
# one-off: the build's scatter variants and the CPU kernel's tile sizes on the device host
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"; sum="$res/exp-summary.txt"
g=.gpu/bin/genie; gb=.gpu/bin/genie-bench
echo "commit $(cat .gpu/COMMIT | tr '\n' ' '); cores $(nproc); $(grep -m1 'model name' /proc/cpuinfo)" | tee "$sum"
echo "THP enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled); defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag)" | tee -a "$sum"
grep -E "^(Hugepagesize|AnonHugePages|MemTotal|MemAvailable)" /proc/meminfo | tee -a "$sum"
df -h /tmp /dev/shm | tee -a "$sum"
d=/tmp/exp; rm -rf $d; mkdir -p $d
$gb --mode write-keywords --objects 4500000 --queries 16 --seed 1 --out $d/b --formats npy > /dev/null 2>&1
ls -l $d/b | tee -a "$sum"
echo "== scatter variants (x plain, h huge pages, c combined lines, hc both), 4.5 M from NumPy, output /dev/shm" | tee -a "$sum"
for r in 1 2; do for v in x h c hc; do
  GENIE_SCATTER=$v RUST_LOG=genie_core=debug,genie=debug $g --quiet build --input $d/b --output /dev/shm/x.genie 2> $d/l
  echo "$v run $r: $(grep -o 'de-duplicated in.*' $d/l) | $(grep -o 'built the index in.*' $d/l)" | tee -a "$sum"
  grep AnonHugePages /proc/meminfo >/dev/null
  rm -f /dev/shm/x.genie
done; done
rm -rf $d
echo "== CPU tiles, 128 queries" | tee -a "$sum"
timeout 300 $gb --mode cpu --threads 1,16 --workloads SIFT-like,Tweets-like --tile-kib 128,512,1024,2048 --queries 128 --reference-queries 8 --repeats 2 --csv "$res/cpu-tiles.csv" > "$res/cpu-tiles.log" 2>&1
echo "exit $?" | tee -a "$sum"
grep -A30 "^workload " "$res/cpu-tiles.log" | tee -a "$sum"

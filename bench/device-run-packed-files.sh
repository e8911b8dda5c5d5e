#!/usr/bin/env bash
# Issue 37's packed index files on one GPU (genie build --postings packed: the List Array stored
# packed, copied so and unpacked on the device), from the repo root with D (default .gpu-new:
# bin/genie, bin/genie-bench, tests/kernels-*, tests/conformance-*, COMMIT; each .xz) there.
# PART=suite (default):
# - the ceilings; the kernels' tests (the shipped builds load) and every conformance case, counted
#   by backend (gpu_packed_file*: the packed index files, unpacked on the device or kept packed);
# - the suite's four keyword workloads at 1,024 queries, plain and --packed-file in turn, ROUNDS
#   times (default 2): the index upload column, match and q/s.
# PART=cli:
# - SIFT-like 4.5 M objects (genie-bench --mode write-keywords, 237 x 67, seed 1) built by the CLI
#   plain and --postings packed; genie info; genie search on the GPU of its 1,024 queries, k 100,
#   3 times each in turn: wall time, the upload's lines and stages; answers compared;
# - the torch peer on Adult-x20-like (the suite's --dump, bench/peers/torch_spmm.py --load).
# VARIANTS="new:DIR old:DIR" (default "new:$D") runs the suite's and the CLI's searches of every
# variant's bin/ in turn within each round (the tests and the builds are the first variant's);
# SKIP_PEER=1 leaves out the torch peer.
# Writes $OUT/files-summary.txt and the raw logs.
set -uo pipefail
D=${D:-.gpu-new}
VARIANTS=${VARIANTS:-new:$D}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
sum="$res/files-summary-${PART:-suite}.txt"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
for v in $VARIANTS; do
  for f in "${v#*:}"/bin/*.xz "${v#*:}"/tests/*.xz; do [ -e "$f" ] && xz -df "$f" && chmod +x "${f%.xz}"; done
done
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
source "$(dirname "$0")/timing.sh"
device_header "$sum" "$D"
bench=$D/bin/genie-bench
genie=$D/bin/genie
if [ "${PART:-suite}" = suite ]; then
  $bench --mode ceilings 2>&1 | grep -E "^device|^ceilings" | tee -a "$sum"
  if [ -z "${SKIP_TESTS:-}" ]; then
  echo "kernels: $($D/tests/kernels-* 2>&1 | grep 'test result' | tail -1)" | tee -a "$sum"
  timeout "${CONF_LIMIT:-200}" $D/tests/conformance-* > "$res/conformance.log" 2>&1
  grep "test result" "$res/conformance.log" | tee -a "$sum"
  grep -E "^test .* \.\.\. " "$res/conformance.log" | awk '{split($2, a, "::"); print a[1], $NF}' | sort | uniq -c | tee -a "$sum"
  grep -iE "skipped|FAILED|panicked" "$res/conformance.log" | head -5 | tee -a "$sum"
  fi
  workloads=${WORKLOADS:-OCR-like,SIFT-like,Tweets-like,Adult-x20-like}
  for r in $(seq 1 "${ROUNDS:-2}"); do
    for v in $VARIANTS; do
    for form in plain packed; do
      flag=""; [ $form = packed ] && flag=--packed-file
      log="$res/suite-${v%%:*}-$form-$r.log"
      RUST_LOG=genie_core=debug "${v#*:}"/bin/genie-bench --mode suite --only "$workloads" --queries 1024 $flag \
        --csv "$res/suite-${v%%:*}-$form-$r.csv" > "$log" 2>&1
      echo "== suite, ${v%%:*}, $form index, round $r" | tee -a "$sum"
      grep -E "as a packed index file|uploaded [0-9]+ postings|unpacked [0-9]+ postings on the device|dense keyword lists" "$log" |
        sed 's/^\[[^]]*\] //' | tee -a "$sum"
      grep -E "^(OCR|SIFT|Tweets|Adult)-[a-z0-9-]+ +[0-9]+ " "$log" | tee -a "$sum"
    done
    done
  done
  echo "== summary: index upload s, match s, q/s of the main rows" | tee -a "$sum"
  for f in "$res"/suite-*.log; do
    b=$(basename "$f" .log)
    grep -E "^(OCR|SIFT|Tweets|Adult)-[a-z0-9-]+ +[0-9]+ " "$f" |
      awk -v b="$b" '{printf "%-16s %-16s upload %s s, match %s s, q/s %s\n", b, $1, $4, $6, $9}' | tee -a "$sum"
  done
  exit 0
fi
# PART=cli
w=/tmp/w; rm -rf $w /tmp/plain.genie /tmp/packed.genie
t0=$(now)
$bench --mode write-keywords --objects 4500000 --dims 237 --values 67 --queries 1024 --seed 1 \
  --formats npy --out $w > "$res/write.log" 2>&1 || tail -3 "$res/write.log"
echo "wrote SIFT-like 4.5 M in $(since "$t0") ms: $(ls $w | tr '\n' ' ')" | tee -a "$sum"
for form in plain packed; do
  t0=$(now)
  $genie build -i $w -o /tmp/$form.genie --postings $form > "$res/build-$form.log" 2>&1 || tail -3 "$res/build-$form.log"
  echo "built $form in $(since "$t0") ms: $(tail -2 "$res/build-$form.log" | tr '\n' ' ')" | tee -a "$sum"
  $genie info --index /tmp/$form.genie | grep -E "postings|list array|file" | tee -a "$sum"
done
queries=$(ls $w/queries.txt)
for r in 1 2 3; do
  for v in $VARIANTS; do
  for form in plain packed; do
    log="$res/search-${v%%:*}-$form-$r.log"
    t0=$(now)
    RUST_LOG=genie_core=debug,genie=info "${v#*:}"/bin/genie -v search --index /tmp/$form.genie --queries "$queries" \
      -k 100 --device gpu -o /tmp/${v%%:*}-$form-$r.out > "$log" 2>&1 || tail -3 "$log"
    echo "== search ${v%%:*} $form, round $r: wall $(since "$t0") ms" | tee -a "$sum"
    grep -E "mapped and checked|uploaded [0-9.]+ MB|uploaded [0-9]+ postings|unpacked [0-9]+ postings|dense keyword lists|ready in|stages:|searched" "$log" |
      sed 's/^\[[^]]*\] //' | tee -a "$sum"
  done
  done
done
for f in /tmp/*-*-1.out; do
  cmp /tmp/new-plain-1.out "$f" && echo "answers: $(basename "$f") identical to new-plain-1.out" | tee -a "$sum"
done
rm -rf $w /tmp/*.genie* /tmp/*-*-[0-9].out
[ -n "${SKIP_PEER:-}" ] && exit 0
echo "== torch peer, Adult-x20-like (same index and queries)" | tee -a "$sum"
rm -rf /tmp/peer-dump
RUST_LOG=warn $bench --mode suite --only Adult-x20-like --queries 1024 --dump /tmp/peer-dump \
  --csv "$res/suite-adult.csv" > "$res/suite-adult.log" 2>&1
grep -E "^Adult-x20-like +[0-9]+ " "$res/suite-adult.log" | tee -a "$sum"
python3 -c "import torch; print('torch', torch.__version__)" 2>&1 | tee -a "$sum"
timeout 200 python3 bench/peers/torch_spmm.py --load /tmp/peer-dump/Adult-x20-like --csv "$res/peer-adult.csv" 2>&1 |
  grep -v -e "Warning" -e "^  A = " | tail -8 | tee -a "$sum"
rm -rf /tmp/peer-dump
if [ -n "${NCU_ADULT:-}" ]; then
  # Nsight Compute on one launch of each match kernel of Adult-x20-like at 1,024 queries
  echo "== Nsight Compute, Adult-x20-like 1,024 queries, the match kernels" | tee -a "$sum"
  timeout 150 /usr/local/cuda/bin/ncu --clock-control none --set full --kernel-name regex:"match" \
    --launch-skip 20 --launch-count 2 -f -o /tmp/ncu-adult $bench --mode suite --only Adult-x20-like \
    --queries 1024 > "$res/ncu-adult.log" 2>&1
  /usr/local/cuda/bin/ncu -i /tmp/ncu-adult.ncu-rep --page details > "$res/ncu-adult.txt" 2>&1
  grep -E "^  [a-z_0-9]+.*\(|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Registers Per|Block Size|Grid Size|Warp Cycles Per Issued|Issued Ipc|L1/TEX Hit|L2 Hit" \
    "$res/ncu-adult.txt" | head -40 | tee -a "$sum"
fi

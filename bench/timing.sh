# Timing helpers sourced by the device-run scripts (bash).
# now: the clock in seconds; since T0: milliseconds since T0 (one decimal).
now() { date +%s.%N; }
since() { python3 -c "print(f'{($(now) - $1) * 1e3:.1f}')"; }
# walls N CMD...: wall times (ms) of N runs of CMD, output dropped: "best X ms, median Y ms"
walls() {
  local ts=() reps=$1; shift
  for _ in $(seq "$reps"); do
    local t0; t0=$(now); "$@" > /dev/null 2>&1 || { echo "FAILED: $*"; return 1; }
    ts+=("$(since "$t0")")
  done
  python3 -c "import statistics,sys; v=sorted(map(float,sys.argv[1:])); print(f'best {v[0]:.1f} ms, median {statistics.median(v):.1f} ms')" "${ts[@]}"
}
# disk_ceiling MIB FILE FLAGS: the disk's own write speed, in the same run as a build: MIB MiB
# (whole 16 MiB blocks) of zeros written to FILE by dd with FLAGS (e.g. "conv=fsync"), after a
# sync; prints dd's line and the wall time, and removes FILE
disk_ceiling() {
  local mb=$1 file=$2 flags=$3 t0
  sync; t0=$(now)
  # shellcheck disable=SC2086 # the flags are words
  dd if=/dev/zero of="$file" bs=16M count=$((mb / 16)) $flags 2>&1 | tail -1 | sed "s/^/  dd $flags: /"
  echo "disk ceiling ($flags): $((mb / 16 * 16)) MiB in $(since "$t0") ms"
  rm -f "$file"
}
# device_header SUM [DIR]: the GPUs, the host's cores and kernel and the commit (DIR/COMMIT,
# default .gpu), printed and written to the summary file SUM (which it starts)
device_header() {
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$1"
  echo "host cores: $(nproc); kernel: $(uname -r); commit: $(cat "${2:-.gpu}/COMMIT" 2>/dev/null)" | tee -a "$1"
}
# ncu_launch DIR NAME KERNEL WORKLOAD BENCH: Nsight Compute's full set on one launch of the kernels
# matching KERNEL (a regex) in `BENCH --mode suite --only WORKLOAD --queries 1024`, after skipping
# NCU_SKIP launches (default 12); GENIE_PACKED_POSTINGS as the caller sets it. Writes DIR/ncu-NAME.log,
# DIR/ncu-NAME.txt (the details page), DIR/sass-NAME.csv (each SASS instruction's executions and
# stalls) and prints the details' main lines. NCU_BIN (default /usr/local/cuda/bin/ncu) names ncu.
ncu_launch() {
  local dir=$1 name=$2 kernel=$3 workload=$4 bench=$5 ncu=${NCU_BIN:-/usr/local/cuda/bin/ncu}
  "$ncu" --clock-control none --set full --kernel-name "regex:$kernel" --launch-skip "${NCU_SKIP:-12}" \
    --launch-count 1 -f -o "/tmp/ncu-$name" "$bench" --mode suite --only "$workload" --queries 1024 \
    > "$dir/ncu-$name.log" 2>&1
  "$ncu" -i "/tmp/ncu-$name.ncu-rep" --page details > "$dir/ncu-$name.txt" 2>&1
  "$ncu" -i "/tmp/ncu-$name.ncu-rep" --page source --csv --print-source sass > "$dir/sass-$name.csv" 2>&1
  grep -vE "^\s*$|----" "$dir/ncu-$name.txt" | sed -n '/Section: GPU Speed Of Light/,$p' |
    grep -E "Duration|Throughput|Memory \[%\]|DRAM|L2 Hit|L1/TEX Hit|Issued|Eligible|Occupancy|Registers|Stall|pipe|Warp Cycles|Executed Ipc|Shared|excessive" |
    head -40
}

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

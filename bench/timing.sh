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

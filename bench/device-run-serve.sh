#!/usr/bin/env bash
# The server under load on the GPU machine (issue 12). Run from the repo root after
# scripts/gpu/stage staged .gpu/ here:
#   bash bench/device-run-serve.sh tests   # every test binary, then `genie serve` + curl on the GPU
#   bash bench/device-run-serve.sh load    # genie-bench --mode serve: 1, 64, 1,024 clients, open loop
#   bash bench/device-run-serve.sh sweep   # 1,024 clients at the largest batch 256 and 1,024
#   bash bench/device-run-serve.sh soak    # 5 minutes at 1,024 clients, 10% malformed requests
# Every server listens on 127.0.0.1 only; every loop is bounded in time and requests.
# Results under $OUT: tests.log, smoke.log, serve-load.csv/.log, serve-soak.csv/.log.
set -uo pipefail
out=${OUT:-/tmp/genie-out}
mkdir -p "$out"
export RUST_LOG=${RUST_LOG:-warn}
ulimit -n 65536 2>/dev/null || ulimit -n 8192 2>/dev/null || true
echo "open files: $(ulimit -n)"
status=0
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true

smoke() {
  # the newcomer's path on the GPU: build, serve, query with curl and with genie search --server,
  # compare with a local search, then SIGTERM
  local d=/tmp/genie-smoke
  rm -rf "$d"; mkdir -p "$d"
  .gpu/run bin genie build --input examples/data/objects.txt --output "$d/demo.genie" || return 1
  .gpu/run bin genie search --device gpu --index "$d/demo.genie" --queries examples/data/queries.txt --k 3 > "$d/local.jsonl" || return 1
  .gpu/run bin genie serve --device gpu --index demo="$d/demo.genie" --listen 127.0.0.1:7701 2> "$d/serve.log" &
  local pid=$!
  for _ in $(seq 1 100); do grep -q listening "$d/serve.log" && break; sleep 0.2; done
  curl -s --max-time 10 http://127.0.0.1:7701/v1/indexes; echo
  curl -s --max-time 10 -X POST http://127.0.0.1:7701/v1/indexes/demo/search \
    -H 'content-type: application/json' -d '{"queries": ["1-2 5 10-11", [3, 5, 9]], "k": 3}'; echo
  .gpu/run bin genie search --server http://127.0.0.1:7701 --index demo --queries examples/data/queries.txt --k 3 > "$d/remote.jsonl" || return 1
  curl -s --max-time 10 http://127.0.0.1:7701/metrics | grep -E "^genie_(requests_total|device_memory|batch_size_count|resident)" || true
  kill -TERM "$pid"; wait "$pid"; echo "genie serve exited with $? after SIGTERM"
  cat "$d/serve.log"
  if cmp -s "$d/local.jsonl" "$d/remote.jsonl"; then echo "remote == local: yes"; else echo "remote == local: NO"; diff "$d/local.jsonl" "$d/remote.jsonl"; return 1; fi
}

case "${1:-load}" in
  tests)
    timeout 360 .gpu/run tests 2>&1 | tee "$out/tests.log" | grep -E "^== |test result|FAILED|skipped|test binaries" || status=1
    smoke 2>&1 | tee "$out/smoke.log" || status=1
    ;;
  load)
    timeout 420 .gpu/run bin genie-bench --mode serve --clients 1,64,1024 --rates 2000,10000 \
      --seconds 10 --csv "$out/serve-load.csv" 2>&1 | tee "$out/serve-load.log" | grep -v INFO || status=1
    ;;
  sweep)
    for b in 256 1024; do
      timeout 60 .gpu/run bin genie-bench --mode serve --clients 1024 --seconds 10 --max-batch $b \
        --csv "$out/serve-batch$b.csv" 2>&1 | grep -v INFO | tail -4 || status=1
    done
    ;;
  soak)
    timeout 420 .gpu/run bin genie-bench --mode serve --clients 1024 --seconds 5 --soak-secs 300 \
      --malformed 0.1 --csv "$out/serve-soak.csv" 2>&1 | tee "$out/serve-soak.log" | grep -v INFO || status=1
    ;;
  *) echo "usage: $0 tests|load|sweep|soak"; exit 2;;
esac
exit $status

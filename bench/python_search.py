#!/usr/bin/env python3
"""Times searches from Python (the genie package) on an index file and a queries file in the
`genie` program's formats, to compare with the Rust figure of the same index and queries
(`genie-bench --mode dump --index INDEX --queries QUERIES --k K --device gpu --out DIR` prints
genie's own search time).

    python bench/python_search.py --index sift.genie --queries queries.txt --k 100 --device gpu

Loads the index and places it on the device, reads the queries as `genie search` does, warms up
(the first 8 queries, then the whole file once), then times `search` over the whole file
--repeats times and prints one line:

    python_search,device=...,backend=...,queries=...,k=...,best_s=...,median_s=...,qps_best=...,qps_median=...
    python_stages,parse_ms=...,search_ms=...,[device_..._ms=...,host_..._ms=...,]output_ms=...,python_rest_ms=...
"""

from __future__ import annotations

import argparse
import statistics
import time

import genie


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--index", required=True, help="an index file of `genie build`")
    p.add_argument("--queries", required=True, help="a queries file of `genie search`")
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--device", default="gpu", help="auto, cpu, gpu or gpu:N")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()

    index = genie.load(args.index)
    queries = genie.read_queries(args.queries, kind=index.kind)
    backend = index.backend(args.device)
    if index.kind == "keywords":
        offsets = queries[0]
        n = len(offsets) - 1
        m = int(offsets[min(n, 8)])
        first = (offsets[: min(n, 8) + 1], queries[1][:m], queries[2][:m], queries[3][:m])
    else:
        n = len(queries)
        first = queries[:8]
    index.search(first, args.k, device=args.device)
    index.search(queries, args.k, device=args.device)
    times, stages = [], []
    for _ in range(args.repeats):
        t = time.perf_counter()
        index.search(queries, args.k, device=args.device)
        times.append(time.perf_counter() - t)
        stages.append(index.last_timings())
    best, median = min(times), statistics.median(times)
    print(
        f"python_search,device={args.device},backend={backend!r},queries={n},k={args.k},"
        f"best_s={best:.6f},median_s={median:.6f},qps_best={n / best:.0f},"
        f"qps_median={n / median:.0f}"
    )
    # where the best run's time went (ms): the Python wrapper's part is the rest
    st = stages[times.index(best)]
    rest = best * 1e3 - sum(st.get(x, 0.0) for x in ("parse", "search", "output"))
    print("python_stages," + ",".join(f"{name}_ms={v:.2f}" for name, v in st.items())
          + f",python_rest_ms={rest:.2f}")


if __name__ == "__main__":
    main()

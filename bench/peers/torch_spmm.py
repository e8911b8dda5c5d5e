"""The peer a user would otherwise write: postings as a sparse matrix times the query matrix with
PyTorch (cuSPARSE), then torch.topk. Same workload shape as genie-bench's default table: N objects
of D dimensions x V values (one keyword per dimension), each query a perturbed object (each
dimension kept with probability 1/2, else a random value), k = 100.

Usage (on the device, whose python3 has PyTorch):
  python3 bench/peers/torch_spmm.py --objects 10000000 --queries 1024,8192 --csv out.csv
Prints a table: time per batch (median of 3 after a warm-up), queries/s, postings/s and the peak
device memory per query. torch.topk breaks ties in no fixed order, so only counts are comparable
with genie's hits, not ids among tied counts.
"""
import argparse
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=10_000_000)
    ap.add_argument("--dims", type=int, default=128)
    ap.add_argument("--values", type=int, default=64)
    ap.add_argument("--queries", default="1024,8192")
    ap.add_argument("--batch", type=int, default=1024, help="queries per sparse x dense product")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--csv")
    a = ap.parse_args()
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(a.seed)
    n, d, v = a.objects, a.dims, a.values
    u = d * v
    vals = torch.randint(0, v, (n, d), device=dev, generator=g, dtype=torch.int32)
    cols = (vals + torch.arange(d, device=dev, dtype=torch.int32) * v).reshape(-1)
    crow = torch.arange(0, n * d + 1, d, device=dev, dtype=torch.int64)
    # object x keyword incidence, CSR (what GENIE's posting lists are, transposed)
    A = torch.sparse_csr_tensor(crow, cols.to(torch.int64), torch.ones(n * d, device=dev), size=(n, u))
    del cols
    torch.cuda.synchronize()
    index_bytes = torch.cuda.memory_allocated()
    print(f"device: {torch.cuda.get_device_name()}  index: {n} objects, {n * d} nnz, {index_bytes / 1e9:.2f} GB on the device")

    rows = []
    for nq in [int(x) for x in a.queries.split(",")]:
        base = torch.randint(0, n, (nq,), device=dev, generator=g)
        keep = torch.rand((nq, d), device=dev, generator=g) < 0.5
        rnd = torch.randint(0, v, (nq, d), device=dev, generator=g, dtype=torch.int32)
        qv = torch.where(keep, vals[base], rnd) + torch.arange(d, device=dev, dtype=torch.int32) * v

        def run():
            outs = []
            for s in range(0, nq, a.batch):
                q = qv[s : s + a.batch]
                Q = torch.zeros((u, q.shape[0]), device=dev)
                Q.scatter_(0, q.T.to(torch.int64), 1.0)
                counts = A @ Q  # n x batch, float32 (exact for these small integers)
                top = torch.topk(counts, a.k, dim=0)
                outs.append((top.values.T.to(torch.int32), top.indices.T))
                del counts, Q
            return outs

        run()  # warm-up
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        times = []
        for _ in range(3):
            torch.cuda.synchronize()
            t = time.perf_counter()
            run()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t)
        secs = sorted(times)[1]
        peak = torch.cuda.max_memory_allocated() - index_bytes
        per_query_mb = peak / min(nq, a.batch) / 1e6
        postings = nq * d * (n / v)
        rows.append((nq, secs, nq / secs, postings / secs / 1e9, per_query_mb))
    print(f"\n{'backend':<34} {'q':>6} {'wall_s':>8} {'q/s':>9} {'Gpost/s':>8} {'MB/q':>8}")
    for nq, secs, qps, gps, mb in rows:
        print(f"{'pytorch spmm+topk (' + torch.__version__ + ')':<34} {nq:>6} {secs:>8.3f} {qps:>9.0f} {gps:>8.2f} {mb:>8.2f}")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("device,torch,objects,dims,values,k,queries,batch,wall_s,qps,gpostings_per_s,mb_per_query\n")
            for nq, secs, qps, gps, mb in rows:
                f.write(f"{torch.cuda.get_device_name()},{torch.__version__},{n},{d},{v},{a.k},{nq},{a.batch},{secs:.6f},{qps:.1f},{gps:.4f},{mb:.3f}\n")


if __name__ == "__main__":
    main()

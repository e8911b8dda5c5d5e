// Vectors resident on a GPU (crates/genie-lsh/src/gpu/vectors/): exact distances for re-ranking,
// a codebook index's closeness scan and its planning, nearest centres. Every result is identical to
// the CPU's (crates/genie-lsh/src/metric.rs, codebook/), operation for operation.

// ---- exact distances for re-ranking (crates/genie-lsh/src/metric.rs) -----------------------------
// The CPU's `lanes` with f(x, y) = (x - y)^2 (L2, then sqrt), |x - y| (L1) or x * y (the three dot
// products of the cosine distance), in the same order and rounding, so re-ranked results are
// identical on both backends.

template <int OP>
__device__ __forceinline__ float lane_op(float x, float y) {
    if (OP == 0) {
        const float d = __fsub_rn(x, y);
        return __fmul_rn(d, d);
    }
    if (OP == 1) return fabsf(__fsub_rn(x, y));
    return __fmul_rn(x, y);
}

// The CPU's `lanes` (eight float lanes, lane l summing dimensions l, l + 8, ... in order; the lanes
// then the tail summed in f64) computed by the eight threads of a group (threads 8g .. 8g + 7 of a warp, `mask` theirs):
// thread l keeps lane l, reading dimensions l, l + 8, ... so that the group's reads are contiguous;
// the lanes are then summed in the CPU's order. Every thread of the group gets the result.
template <int OP>
__device__ double lanes_group(const float* __restrict__ a, const float* __restrict__ b, u32 dim, u32 l,
                              u32 mask) {
    float acc = 0.f;
    const u32 full = dim / 8u * 8u;
    for (u32 j = l; j < full; j += 8u) acc = __fadd_rn(acc, lane_op<OP>(a[j], b[j]));
    float tail = -0.0f;
    if (l == 0)
        for (u32 j = full; j < dim; ++j) tail = __fadd_rn(tail, lane_op<OP>(a[j], b[j]));
    double s = -0.0;
#pragma unroll
    for (u32 i = 0; i < 8u; ++i) s = __dadd_rn(s, (double)__shfl_sync(mask, acc, (int)i, 8));
    return __dadd_rn(s, (double)__shfl_sync(mask, tail, 0, 8));
}

// The CPU's `lanes` over the query `a` and a row `b` given by a loader (`b(j)`: the row's value j,
// rebuilt as the CPU's store does), as `lanes_group`; `lanes_self` sums f(b_j, b_j).
template <int OP, class B>
__device__ double lanes_rows(const float* __restrict__ a, const B& b, u32 dim, u32 l, u32 mask) {
    float acc = 0.f;
    const u32 full = dim / 8u * 8u;
    for (u32 j = l; j < full; j += 8u) acc = __fadd_rn(acc, lane_op<OP>(a[j], b(j)));
    float tail = -0.0f;
    if (l == 0)
        for (u32 j = full; j < dim; ++j) tail = __fadd_rn(tail, lane_op<OP>(a[j], b(j)));
    double s = -0.0;
#pragma unroll
    for (u32 i = 0; i < 8u; ++i) s = __dadd_rn(s, (double)__shfl_sync(mask, acc, (int)i, 8));
    return __dadd_rn(s, (double)__shfl_sync(mask, tail, 0, 8));
}

template <int OP, class B>
__device__ double lanes_self(const B& b, u32 dim, u32 l, u32 mask) {
    float acc = 0.f;
    const u32 full = dim / 8u * 8u;
    for (u32 j = l; j < full; j += 8u) {
        const float x = b(j);
        acc = __fadd_rn(acc, lane_op<OP>(x, x));
    }
    float tail = -0.0f;
    if (l == 0)
        for (u32 j = full; j < dim; ++j) {
            const float x = b(j);
            tail = __fadd_rn(tail, lane_op<OP>(x, x));
        }
    double s = -0.0;
#pragma unroll
    for (u32 i = 0; i < 8u; ++i) s = __dadd_rn(s, (double)__shfl_sync(mask, acc, (int)i, 8));
    return __dadd_rn(s, (double)__shfl_sync(mask, tail, 0, 8));
}

// The distance from the query `a` to row `id` for metric 0 = L2, 1 = L1, 2 = cosine distance, by
// the eight threads of a group (thread `l` of it, `mask` theirs); every thread of the group gets it.
template <class Rows>
__device__ __forceinline__ double pair_distance(const Rows& rows, u32 id, const float* __restrict__ a, u32 dim,
                                                u32 metric, u32 l, u32 mask) {
    const auto b = rows(id);
    if (metric == 0) return __dsqrt_rn(lanes_rows<0>(a, b, dim, l, mask));
    if (metric == 1) return lanes_rows<1>(a, b, dim, l, mask);
    const double na = __dsqrt_rn(lanes_group<2>(a, a, dim, l, mask));
    const double nb = __dsqrt_rn(lanes_self<2>(b, dim, l, mask));
    const double ab = lanes_rows<2>(a, b, dim, l, mask);
    if (na == 0.0 || nb == 0.0) return 1.0;
    const double d = __dsub_rn(1.0, __ddiv_rn(ab, __dmul_rn(na, nb)));
    // Rust's clamp: NaN stays NaN
    return d < 0.0 ? 0.0 : (d > 2.0 ? 2.0 : d);
}

// The re-rank distances of every (query, candidate) pair, eight threads a pair: out[t] = the
// distance from query t / kc to the row `rows(c)` for metric 0 = L2, 1 = L1, 2 = cosine distance,
// `c` = cands[t], or cands[t % kc] when `shared` (every query the same kc candidates: a filter's
// allowed objects); NaN where c >= n (no candidate).
template <class Rows>
__device__ __forceinline__ void rerank_pairs(const Rows& rows, u32 n, u32 dim, const float* __restrict__ queries,
                                             const u32* __restrict__ cands, u32 kc, u32 shared, u32 nq,
                                             u32 metric, double* out) {
    const u64 total = (u64)nq * kc;
    const u32 l = threadIdx.x & 7u;
    const u32 mask = 0xffu << (threadIdx.x & 24u);
    const u64 step = ((u64)gridDim.x * blockDim.x) >> 3;
    for (u64 t = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 3; t < total; t += step) {
        const u32 id = cands[shared ? t % kc : t];
        if (id >= n) {
            if (l == 0) out[t] = __longlong_as_double(0x7ff8000000000000ll);
            continue;
        }
        const double d = pair_distance(rows, id, queries + (t / kc) * dim, dim, metric, l, mask);
        if (l == 0) out[t] = d;
    }
}

// A float row of the resident vectors.
struct FloatRow {
    const float* p;
    __device__ __forceinline__ float operator()(u32 j) const { return p[j]; }
};
struct FloatRows {
    const float* vecs;
    u32 dim;
    __device__ __forceinline__ FloatRow operator()(u32 id) const { return FloatRow{vecs + (u64)id * dim}; }
};

// ---- a filter's exact top k in one pass (crates/genie-lsh/src/gpu/vectors/among.rs) ------------
// Every query against the same `kc` candidates (each below n), its `k` (at most AMONG_MAX_K) nearest
// kept as `rank_top_k` orders them with counts 0: (distance by its total order, id). A block of
// AMONG_QUERIES warps takes as many queries, warp w query w: the candidates come in tiles of 32 rows
// copied to shared memory, and lane l computes the whole distance from its query to row l of the
// tile in the CPU's order (`lanes_one`: `pair_distance`'s value, from shared memory, no shuffles).
// Lanes whose key beats the query's k-th so far go to a buffer (a ballot gives each its place) and
// lane 0 inserts them into the query's sorted list. No distance goes to memory, each candidate's
// row is read once a block for its AMONG_QUERIES queries, and a block holds 32 rows at an odd
// stride, its AMONG_QUERIES queries and their lists and buffers (`among_shared_bytes` on the host,
// which launches it only where that fits 48 KiB: up to 256 dimensions at 32 hits).
#define AMONG_MAX_K 32u
#define AMONG_QUERIES 8u
#define AMONG_TILE 32u

// `lanes_group`'s value by one thread: lane l's sum of f over dimensions l, l + 8, ... in order, the
// tail, then the lanes and the tail summed in f64 in the CPU's order.
template <int OP>
__device__ __forceinline__ double lanes_one(const float* a, const float* b, u32 dim) {
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    const u32 full = dim / 8u * 8u;
    for (u32 j = 0; j < full; j += 8u) {
#pragma unroll
        for (u32 l = 0; l < 8u; ++l) acc[l] = __fadd_rn(acc[l], lane_op<OP>(a[j + l], b[j + l]));
    }
    float tail = -0.0f;
    for (u32 j = full; j < dim; ++j) tail = __fadd_rn(tail, lane_op<OP>(a[j], b[j]));
    double s = -0.0;
#pragma unroll
    for (u32 l = 0; l < 8u; ++l) s = __dadd_rn(s, (double)acc[l]);
    return __dadd_rn(s, (double)tail);
}

// `pair_distance` of the query `a` and the row `b`, both in shared memory, by one thread.
__device__ __forceinline__ double pair_distance_one(const float* a, const float* b, u32 dim, u32 metric) {
    if (metric == 0) return __dsqrt_rn(lanes_one<0>(a, b, dim));
    if (metric == 1) return lanes_one<1>(a, b, dim);
    const double na = __dsqrt_rn(lanes_one<2>(a, a, dim));
    const double nb = __dsqrt_rn(lanes_one<2>(b, b, dim));
    const double ab = lanes_one<2>(a, b, dim);
    if (na == 0.0 || nb == 0.0) return 1.0;
    const double d = __dsub_rn(1.0, __ddiv_rn(ab, __dmul_rn(na, nb)));
    // Rust's clamp: NaN stays NaN
    return d < 0.0 ? 0.0 : (d > 2.0 ? 2.0 : d);
}

// f64 bits as a u64 that orders as Rust's `total_cmp`
__device__ __forceinline__ u64 total_order(double x) {
    const i64 i = __double_as_longlong(x);
    return (u64)(i ^ (i64)(((u64)(i >> 63)) >> 1)) ^ 0x8000000000000000ull;
}

// The f64 of a `total_order` key.
__device__ __forceinline__ double from_total_order(u64 key) {
    const i64 bits = (i64)(key ^ 0x8000000000000000ull);
    return __longlong_as_double(bits ^ (i64)(((u64)(bits >> 63)) >> 1));
}

__device__ __forceinline__ bool among_less(u64 ka, u32 ia, u64 kb, u32 ib) {
    return ka < kb || (ka == kb && ia < ib);
}

// Inserts (key, id) into the sorted list `lk`, `li` of `len` (at most k) entries where it belongs
// among its best k; returns the new length.
__device__ __forceinline__ u32 among_insert(u64* lk, u32* li, u32 len, u32 k, u64 key, u32 id) {
    if (len == k && !among_less(key, id, lk[k - 1], li[k - 1])) return len;
    u32 j = len < k ? len : k - 1;
    while (j > 0 && among_less(key, id, lk[j - 1], li[j - 1])) {
        lk[j] = lk[j - 1];
        li[j] = li[j - 1];
        --j;
    }
    lk[j] = key;
    li[j] = id;
    return len < k ? len + 1 : len;
}

template <class Rows>
__device__ __forceinline__ void among_top(const Rows& rows, u32 dim, const float* __restrict__ queries,
                                          const u32* __restrict__ cands, u32 kc, u32 nq, u32 metric, u32 k,
                                          u32* top_ids, double* top_dist, u32* top_n) {
    extern __shared__ unsigned char among_smem[];
    // an odd row stride: lane l reading element j of row l meets no other lane's bank
    const u32 stride = dim | 1u;
    // lists [query][k] keys, their ids, buffers [query][32] keys and ids, the tile, the queries
    u64* keys = (u64*)among_smem;
    u64* bkeys = keys + AMONG_QUERIES * k;
    u32* ids = (u32*)(bkeys + AMONG_QUERIES * AMONG_TILE);
    u32* bids = ids + AMONG_QUERIES * k;
    float* tile = (float*)(bids + AMONG_QUERIES * AMONG_TILE);
    float* qs = tile + AMONG_TILE * stride;
    const u32 tid = threadIdx.x, lane = tid & 31u, w = tid >> 5;
    const u32 q = blockIdx.x * AMONG_QUERIES + w;
    const bool mine = q < nq;
    for (u32 i = tid; i < AMONG_QUERIES * dim; i += blockDim.x) {
        const u32 qq = blockIdx.x * AMONG_QUERIES + i / dim;
        qs[i] = qq < nq ? queries[(u64)qq * dim + i % dim] : 0.0f;
    }
    u64* lk = keys + w * k;
    u32* li = ids + w * k;
    u32 len = 0;  // the list's length (lane 0's copy is the one used)
    for (u32 c0 = 0; c0 < kc; c0 += AMONG_TILE) {
        const u32 nt = min(AMONG_TILE, kc - c0);
        __syncthreads();  // the last tile is read by every warp
        // warp w copies rows w, w + AMONG_QUERIES, ... of the tile, one lane an element
        for (u32 r = w; r < nt; r += AMONG_QUERIES) {
            const auto row = rows(cands[c0 + r]);
            for (u32 j = lane; j < dim; j += 32u) tile[r * stride + j] = row(j);
        }
        __syncthreads();
        if (!mine) continue;
        const bool live = lane < nt;
        const u32 id = live ? cands[c0 + lane] : 0u;
        u64 key = 0xffffffffffffffffull;
        if (live) key = total_order(pair_distance_one(qs + w * dim, tile + lane * stride, dim, metric));
        // the list's k-th so far (all lanes read it; lane 0 alone writes the list)
        const bool full = __shfl_sync(0xffffffffu, len, 0) == k;
        const bool pass = live && (!full || among_less(key, id, lk[k - 1], li[k - 1]));
        const u32 ballot = __ballot_sync(0xffffffffu, pass);
        if (pass) {
            const u32 at = __popc(ballot & ((1u << lane) - 1u));
            bkeys[w * AMONG_TILE + at] = key;
            bids[w * AMONG_TILE + at] = id;
        }
        __syncwarp();
        if (lane == 0)
            for (u32 b = 0; b < (u32)__popc(ballot); ++b)
                len = among_insert(lk, li, len, k, bkeys[w * AMONG_TILE + b], bids[w * AMONG_TILE + b]);
        __syncwarp();
    }
    if (!mine) return;
    len = __shfl_sync(0xffffffffu, len, 0);
    for (u32 r = lane; r < len; r += 32u) {
        const u64 o = (u64)q * k + r;
        top_ids[o] = li[r];
        top_dist[o] = from_total_order(lk[r]);
    }
    if (lane == 0) top_n[q] = len;
}

// With `k` 0, `rerank_pairs`; else (shared candidates) `among_top` into `top_ids`, `top_dist`, `top_n`.
extern "C" __global__ void rerank_distance(const float* __restrict__ vecs, u32 n, u32 dim,
                                           const float* __restrict__ queries, const u32* __restrict__ cands,
                                           u32 kc, u32 shared, u32 nq, u32 metric, double* out, u32 k,
                                           u32* top_ids, double* top_dist, u32* top_n) {
    if (k == 0)
        rerank_pairs(FloatRows{vecs, dim}, n, dim, queries, cands, kc, shared, nq, metric, out);
    else
        among_top(FloatRows{vecs, dim}, dim, queries, cands, kc, nq, metric, k, top_ids, top_dist, top_n);
}

// ---- re-rank distances from a compact copy (crates/genie-lsh/src/store.rs) ----------------------
// A row's value j rebuilt as the CPU's `Store::row_into` does, in one rounding: form 1 half-precision
// bits (exact), form 2 `lo[j] + step[j] x code`, form 3 a codebook's `centre[j] + codeword[j]` (the
// object's codes at `pos[id]` of the cells' order, its cell found in `starts`).
__device__ __forceinline__ float half_bits_to_float(unsigned short h) {
    const u32 sign = (u32)(h & 0x8000u) << 16;
    const u32 e = (h >> 10) & 0x1fu;
    const u32 man = h & 0x3ffu;
    if (e == 0) {  // zero or subnormal: man x 2^-24, exact in f32
        const float f = __fmul_rn((float)man, 5.9604644775390625e-8f);
        return sign ? -f : f;
    }
    if (e == 31) return __uint_as_float(sign | 0x7f800000u | (man << 13));
    return __uint_as_float(sign | ((e + 112u) << 23) | (man << 13));
}

struct CompactRow {
    u32 form;
    const unsigned short* half;   // the row's values (form 1)
    const unsigned char* bytes;   // the row's codes (form 2)
    const float* lo;
    const float* step;
    const unsigned char* code;    // the object's slice codes (form 3)
    const float* centre;          // its cell's centre
    const float* books;
    const u32* bounds;
    const u32* slice_of;
    __device__ __forceinline__ float operator()(u32 j) const {
        if (form == 1) return half_bits_to_float(half[j]);
        if (form == 2) return __fadd_rn(lo[j], __fmul_rn(step[j], (float)bytes[j]));
        const u32 s = slice_of[j];
        const u32 b = bounds[s];
        const u32 w = bounds[s + 1] - b;
        return __fadd_rn(centre[j], books[256u * b + (u32)code[s] * w + (j - b)]);
    }
};

struct CompactRows {
    u32 form, dim, ncells, m;
    const unsigned short* half;
    const unsigned char* bytes;
    const float* lo;
    const float* step;
    const u32* pos;
    const u32* starts;
    const unsigned char* codes;
    const float* centres;
    const float* books;
    const u32* bounds;
    const u32* slice_of;

    __device__ __forceinline__ CompactRow operator()(u32 id) const {
        CompactRow r{form, half + (u64)id * dim, bytes + (u64)id * dim, lo, step, codes, centres, books, bounds, slice_of};
        if (form == 3) {
            const u32 p = pos[id];
            u32 lo_c = 0, hi_c = ncells;  // the cell: the last start at or before p
            while (hi_c - lo_c > 1) {
                const u32 mid = (lo_c + hi_c) >> 1;
                if (starts[mid] <= p) lo_c = mid; else hi_c = mid;
            }
            r.code = codes + (u64)p * m;
            r.centre = centres + (u64)lo_c * dim;
        }
        return r;
    }
};

// `rerank_distance` over a compact copy: `half` (form 1), `bytes` with `lo` and `step` (form 2), or
// (form 3) `pos`, the cells' `starts` (ncells + 1) and `codes` (m a position), the `centres` and
// `books` of the codebook, its `bounds` and each dimension's slice `slice_of`.
extern "C" __global__ void rerank_compact(u32 form, const unsigned short* __restrict__ half,
                                          const unsigned char* __restrict__ bytes,
                                          const float* __restrict__ lo, const float* __restrict__ step,
                                          const u32* __restrict__ pos, const u32* __restrict__ starts,
                                          u32 ncells, const unsigned char* __restrict__ codes, u32 m,
                                          const float* __restrict__ centres,
                                          const float* __restrict__ books,
                                          const u32* __restrict__ bounds,
                                          const u32* __restrict__ slice_of, u32 n, u32 dim,
                                          const float* __restrict__ queries,
                                          const u32* __restrict__ cands, u32 kc, u32 shared, u32 nq,
                                          u32 metric, double* out, u32 k, u32* top_ids, double* top_dist,
                                          u32* top_n) {
    const CompactRows rows{form, dim, ncells, m, half, bytes, lo, step, pos, starts, codes, centres, books, bounds, slice_of};
    if (k == 0)
        rerank_pairs(rows, n, dim, queries, cands, kc, shared, nq, metric, out);
    else
        among_top(rows, dim, queries, cands, kc, nq, metric, k, top_ids, top_dist, top_n);
}

// ---- codebook probes on the device (crates/genie-lsh/src/codebook/mod.rs `plan_one`) -----------
// The CPU's arithmetic exactly: `kmeans::dot` in eight lanes with a tail, scores
// `|c|^2 - 2 x.c` and `|w|^2 - 2 (q_s.w - c_s.w)`, and `smallest` ordering by (score by its total
// order, index), so the probes and codewords equal the CPU's.

__device__ __forceinline__ float dot8(const float* __restrict__ a, const float* __restrict__ b, u32 n) {
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    const u32 full = n / 8u * 8u;
    for (u32 j = 0; j < full; j += 8u) {
#pragma unroll
        for (u32 l = 0; l < 8u; ++l) acc[l] = __fadd_rn(acc[l], __fmul_rn(a[j + l], b[j + l]));
    }
    float tail = -0.0f;
    for (u32 j = full; j < n; ++j) tail = __fadd_rn(tail, __fmul_rn(a[j], b[j]));
    const float lo = __fadd_rn(__fadd_rn(acc[0], acc[1]), __fadd_rn(acc[2], acc[3]));
    const float hi = __fadd_rn(__fadd_rn(acc[4], acc[5]), __fadd_rn(acc[6], acc[7]));
    return __fadd_rn(__fadd_rn(lo, hi), tail);
}

// f32 bits as a u32 that orders as Rust's `total_cmp`
__device__ __forceinline__ u32 f32_order(float x) {
    const u32 b = __float_as_uint(x);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ __forceinline__ u64 warp_min_u64(u64 v) {
#pragma unroll
    for (u32 o = 16; o > 0; o >>= 1) {
        const u64 y = __shfl_xor_sync(0xffffffffu, v, o);
        v = y < v ? y : v;
    }
    return v;
}

// ---- top k of re-ranked candidates: (distance ascending by its total order, count descending,
// id ascending), genie-core's `rank_verified`. One block per query, k rounds of a block minimum
// over the keys after the last one taken. With `shared`, every query has the same candidates:
// ids, counts and their number are read from the first query's (`cand_ids[j]`, `n_cand[0]`).

struct RankKey {
    u64 d;
    u32 count;
    u32 id;
};

__device__ __forceinline__ bool key_less(const RankKey& a, const RankKey& b) {
    if (a.d != b.d) return a.d < b.d;
    if (a.count != b.count) return a.count > b.count;
    return a.id < b.id;
}

extern "C" __global__ void rank_top_k(const double* __restrict__ dist, const u32* __restrict__ cand_ids,
                                      const u32* __restrict__ cand_counts, const u32* __restrict__ n_cand,
                                      u32 cand, u32 shared, u32 nq, u32 k, u32* top_ids, u32* top_counts,
                                      double* top_dist, u32* top_n) {
    __shared__ RankKey warp_best[32];
    __shared__ RankKey s_last;
    const u32 tid = threadIdx.x, lane = tid & 31u, w = tid >> 5, nw = (blockDim.x + 31u) >> 5;
    const RankKey none = {0xffffffffffffffffull, 0u, 0xffffffffu};
    for (u32 q = blockIdx.x; q < nq; q += gridDim.x) {
        const u32 n = min(n_cand[shared ? 0u : q], cand), rounds = min(n, k);
        bool first = true;
        RankKey last = none;
        for (u32 r = 0; r < rounds; ++r) {
            RankKey best = none;
            for (u32 j = tid; j < n; j += blockDim.x) {
                const u64 at = (u64)q * cand + j, ci = shared ? (u64)j : at;
                const RankKey key = {total_order(dist[at]), cand_counts[ci], cand_ids[ci]};
                if ((first || key_less(last, key)) && key_less(key, best)) best = key;
            }
#pragma unroll
            for (u32 o = 16; o > 0; o >>= 1) {
                RankKey other;
                other.d = __shfl_down_sync(0xffffffffu, best.d, o);
                other.count = __shfl_down_sync(0xffffffffu, best.count, o);
                other.id = __shfl_down_sync(0xffffffffu, best.id, o);
                if (key_less(other, best)) best = other;
            }
            if (lane == 0) warp_best[w] = best;
            __syncthreads();
            if (tid == 0) {
                RankKey b = warp_best[0];
                for (u32 i = 1; i < nw; ++i)
                    if (key_less(warp_best[i], b)) b = warp_best[i];
                s_last = b;
                const u64 o = (u64)q * k + r;
                top_ids[o] = b.id;
                top_counts[o] = b.count;
                top_dist[o] = from_total_order(b.d);
            }
            __syncthreads();
            last = s_last;
            first = false;
            __syncthreads();
        }
        if (tid == 0) top_n[q] = rounds;
    }
}

// Scores of rows against centres, `|c|^2 - 2 x.c` for every (row, centre), as a tiled product with
// `kmeans::dot`'s exact order: each (row, centre) pair is eight threads, thread `l` summing the
// products of dimensions `l, l + 8, ...` in order, combined as ((0+1)+(2+3))+((4+5)+(6+7)) by
// shuffles, then the tail. A block holds `NEAREST_ROWS` rows in shared memory and runs its 32
// groups of eight threads over its chunk of centres, each centre value read once per tile of rows.
#define NEAREST_ROWS 16u
extern "C" __global__ void nearest_scores(const float* __restrict__ centres, const float* __restrict__ cnorms,
                                          u32 ncells, u32 dim, const float* __restrict__ rows, u32 nrows,
                                          u32 chunk, float* __restrict__ scores) {
    extern __shared__ float xs[];
    const u32 tid = threadIdx.x, lane = tid & 7u, group = tid >> 3, groups = blockDim.x >> 3;
    const u32 r0 = blockIdx.x * NEAREST_ROWS;
    const u32 nr = min(NEAREST_ROWS, nrows - r0);
    for (u32 i = tid; i < NEAREST_ROWS * dim; i += blockDim.x) {
        const u32 r = i / dim;
        xs[i] = r < nr ? rows[(u64)(r0 + r) * dim + (i - r * dim)] : 0.0f;
    }
    __syncthreads();
    const u32 full = dim / 8u * 8u;
    const u32 c_lo = blockIdx.y * chunk, c_hi = min(ncells, c_lo + chunk);
    // every group runs the same number of rounds, so the shuffles see whole groups
    for (u32 base = c_lo; base < c_hi; base += groups) {
        const u32 c = base + group;
        const bool live = c < c_hi;
        const float* cv = centres + (u64)(live ? c : c_lo) * dim;
        float acc[NEAREST_ROWS];
#pragma unroll
        for (u32 r = 0; r < NEAREST_ROWS; ++r) acc[r] = 0.0f;
        for (u32 j = lane; j < full; j += 8u) {
            const float v = cv[j];
#pragma unroll
            for (u32 r = 0; r < NEAREST_ROWS; ++r) acc[r] = __fadd_rn(acc[r], __fmul_rn(xs[r * dim + j], v));
        }
#pragma unroll
        for (u32 r = 0; r < NEAREST_ROWS; ++r) {
            float a = acc[r];
            a = __fadd_rn(a, __shfl_xor_sync(0xffffffffu, a, 1));
            a = __fadd_rn(a, __shfl_xor_sync(0xffffffffu, a, 2));
            a = __fadd_rn(a, __shfl_xor_sync(0xffffffffu, a, 4));
            if (lane == 0 && live && r < nr) {
                float tail = -0.0f;
                for (u32 j = full; j < dim; ++j) tail = __fadd_rn(tail, __fmul_rn(xs[r * dim + j], cv[j]));
                const float d = __fadd_rn(a, tail);
                scores[(u64)(r0 + r) * ncells + c] = __fsub_rn(cnorms[c], __fmul_rn(2.0f, d));
            }
        }
    }
}

// A row's score `c` as the key of `smallest`'s order: (score by its total order, index).
__device__ __forceinline__ u64 score_key(const float* __restrict__ row, u32 c) {
    return ((u64)f32_order(row[c]) << 32) | c;
}

#define SELECT_BINS 256u
// The key of rank `n` (1-based) of a row's `ncells` keys, as a bound `b` with exactly `n` keys <= b:
// a radix select of the 64-bit keys, 8 bits a pass from the top, that stops as soon as the chosen
// bin holds exactly the keys still needed (the keys are distinct, so the last pass always does).
// Every thread of the block calls it; `hist` and `pick` are shared.
__device__ u64 rank_bound(const float* __restrict__ row, u32 ncells, u32 n, u32* hist, u32* pick) {
    const u32 tid = threadIdx.x, lane = tid & 31u;
    u64 prefix = 0;
    u32 need = n;
    for (int sh = 56; sh >= 0; sh -= 8) {
        for (u32 i = tid; i < SELECT_BINS; i += blockDim.x) hist[i] = 0;
        __syncthreads();
        for (u32 c = tid; c < ncells; c += blockDim.x) {
            const u64 key = score_key(row, c);
            if (sh == 56 || (key >> (sh + 8)) == prefix) atomicAdd(&hist[(u32)(key >> sh) & 255u], 1u);
        }
        __syncthreads();
        if (tid < 32u) {
            u32 h[8], sum = 0;
#pragma unroll
            for (u32 t = 0; t < 8u; ++t) {
                h[t] = hist[lane * 8u + t];
                sum += h[t];
            }
            u32 incl = sum;
#pragma unroll
            for (u32 o = 1; o < 32u; o <<= 1) {
                const u32 y = __shfl_up_sync(0xffffffffu, incl, o);
                if (lane >= o) incl += y;
            }
            const u32 excl = incl - sum;
            if (excl < need && need <= incl) {
                u32 cum = excl, bin = 0, held = 0;
                bool found = false;
#pragma unroll
                for (u32 t = 0; t < 8u; ++t) {
                    if (!found && cum + h[t] >= need) {
                        found = true;
                        bin = t;
                        held = h[t];
                    } else if (!found) {
                        cum += h[t];
                    }
                }
                pick[0] = lane * 8u + bin;
                pick[1] = cum;
                pick[2] = held;
            }
        }
        __syncthreads();
        const u32 bin = pick[0], below = pick[1], held = pick[2];
        __syncthreads();
        need -= below;
        prefix = (prefix << 8) | bin;
        if (held == need) return sh == 0 ? prefix : ((prefix << sh) | ((1ull << sh) - 1ull));
    }
    return prefix;
}

// `n` keys (a power of two) in shared memory sorted ascending by the block.
__device__ void block_bitonic_sort(u64* keys, u32 n) {
    for (u32 k = 2; k <= n; k <<= 1) {
        for (u32 j = k >> 1; j > 0; j >>= 1) {
            for (u32 i = threadIdx.x; i < n; i += blockDim.x) {
                const u32 other = i ^ j;
                if (other > i) {
                    const u64 a = keys[i], b = keys[other];
                    if ((a > b) == ((i & k) == 0)) {
                        keys[i] = b;
                        keys[other] = a;
                    }
                }
            }
            __syncthreads();
        }
    }
}

// The `top` smallest of each row of `scores` (`ncells` wide) by (score by its total order,
// index), `smallest`'s order, into `out_idx` (u32::MAX past the row) and their scores.
// A `top` of at most SMALL_TOP: one warp a row, a warp minimum a rank (`top` passes over the row).
// Else one block a row: the ranks in windows of `window` (a power of two, the dynamic shared
// memory's keys), each window's keys found by its upper bound's radix select (`rank_bound`),
// gathered into shared memory and sorted there; a few passes over the row whatever `top` is.
#define SMALL_TOP 8u
extern "C" __global__ void smallest_rows(const float* __restrict__ scores, u32 nrows, u32 ncells, u32 top,
                                         u32 window, u32* __restrict__ out_idx, float* __restrict__ out_scores) {
    extern __shared__ u64 s_keys[];
    __shared__ u32 hist[SELECT_BINS];
    __shared__ u32 pick[3];
    __shared__ u32 s_n;
    const u32 tid = threadIdx.x, lane = tid & 31u;
    const u32 ranked = min(top, ncells);
    if (top <= SMALL_TOP) {
        const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
        for (u64 r = ((u64)blockIdx.x * blockDim.x + tid) >> 5; r < nrows; r += warps) {
            const float* row = scores + r * ncells;
            u64 last = 0;
            for (u32 k = 0; k < ranked; ++k) {
                u64 best = 0xffffffffffffffffull;
                for (u32 c = lane; c < ncells; c += 32u) {
                    const u64 key = score_key(row, c);
                    if ((k == 0 || key > last) && key < best) best = key;
                }
                best = warp_min_u64(best);
                if (lane == 0) {
                    const u32 c = (u32)(best & 0xffffffffull);
                    out_idx[r * top + k] = c;
                    out_scores[r * top + k] = row[c];
                }
                last = best;
            }
            for (u32 k = ranked + lane; k < top; k += 32u) {
                out_idx[r * top + k] = 0xffffffffu;
                out_scores[r * top + k] = 0.0f;
            }
        }
        return;
    }
    for (u64 r = blockIdx.x; r < nrows; r += gridDim.x) {
        const float* row = scores + r * ncells;
        u32* oi = out_idx + r * top;
        float* os = out_scores + r * top;
        u64 lo = 0;
        for (u32 base = 0; base < ranked; base += window) {
            const u32 count = min(window, ranked - base);
            const u64 hi = base + count == ncells ? 0xffffffffffffffffull : rank_bound(row, ncells, base + count, hist, pick);
            if (tid == 0) s_n = 0;
            __syncthreads();
            for (u32 c = tid; c < ncells; c += blockDim.x) {
                const u64 key = score_key(row, c);
                if ((base == 0 || key > lo) && key <= hi) s_keys[atomicAdd(&s_n, 1u)] = key;
            }
            u32 width = 1;
            while (width < count) width <<= 1;
            for (u32 i = count + tid; i < width; i += blockDim.x) s_keys[i] = 0xffffffffffffffffull;
            __syncthreads();
            block_bitonic_sort(s_keys, width);
            for (u32 i = tid; i < count; i += blockDim.x) {
                const u32 c = (u32)(s_keys[i] & 0xffffffffull);
                oi[base + i] = c;
                os[base + i] = row[c];
            }
            __syncthreads();
            lo = hi;
        }
        for (u32 k = ranked + tid; k < top; k += blockDim.x) {
            oi[k] = 0xffffffffu;
            os[k] = 0.0f;
        }
    }
}

// One warp per (query, slice): the query slice's dot with each of the 256 codewords (8 per lane),
// then per probed cell the `entries` codewords of smallest score, nearest first.
extern "C" __global__ void codebook_picks(const float* __restrict__ books, const float* __restrict__ bnorms,
                                          const float* __restrict__ cross, const u32* __restrict__ bounds,
                                          u32 m, u32 dim, const float* __restrict__ queries, u32 nq,
                                          const u32* __restrict__ cells, u32 probes, u32 entries,
                                          unsigned char* picks) {
    const u32 lane = threadIdx.x & 31u;
    const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
    for (u64 wi = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; wi < (u64)nq * m; wi += warps) {
        const u32 q = (u32)(wi / m), s = (u32)(wi % m);
        const u32 lo = bounds[s], width = bounds[s + 1] - lo;
        const float* x = queries + (u64)q * dim + lo;
        const float* book = books + (u64)256u * lo;
        float qw[8], nrm[8];
#pragma unroll
        for (u32 t = 0; t < 8u; ++t) {
            const u32 j = lane + 32u * t;
            qw[t] = dot8(x, book + (u64)j * width, width);
            nrm[t] = bnorms[s * 256u + j];
        }
        for (u32 p = 0; p < probes; ++p) {
            const u32 cell = cells[(u64)q * probes + p];
            if (cell == 0xffffffffu) break;
            const float* cw = cross + ((u64)cell * m + s) * 256u;
            u64 key[8];
#pragma unroll
            for (u32 t = 0; t < 8u; ++t) {
                const u32 j = lane + 32u * t;
                const float sc = __fsub_rn(nrm[t], __fmul_rn(2.0f, __fsub_rn(qw[t], cw[j])));
                key[t] = ((u64)f32_order(sc) << 32) | j;
            }
            unsigned char* out = picks + (((u64)q * probes + p) * m + s) * entries;
            u64 last = 0;
            for (u32 r = 0; r < entries; ++r) {
                u64 best = 0xffffffffffffffffull;
#pragma unroll
                for (u32 t = 0; t < 8u; ++t)
                    if ((r == 0 || key[t] > last) && key[t] < best) best = key[t];
                best = warp_min_u64(best);
                if (lane == 0) out[r] = (unsigned char)(best & 0xffu);
                last = best;
            }
        }
    }
}

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
        const auto b = rows(id);
        const float* a = queries + (t / kc) * dim;
        double d;
        if (metric == 0) {
            d = __dsqrt_rn(lanes_rows<0>(a, b, dim, l, mask));
        } else if (metric == 1) {
            d = lanes_rows<1>(a, b, dim, l, mask);
        } else {
            const double na = __dsqrt_rn(lanes_group<2>(a, a, dim, l, mask));
            const double nb = __dsqrt_rn(lanes_self<2>(b, dim, l, mask));
            const double ab = lanes_rows<2>(a, b, dim, l, mask);
            if (na == 0.0 || nb == 0.0) {
                d = 1.0;
            } else {
                d = __dsub_rn(1.0, __ddiv_rn(ab, __dmul_rn(na, nb)));
                // Rust's clamp: NaN stays NaN
                d = d < 0.0 ? 0.0 : (d > 2.0 ? 2.0 : d);
            }
        }
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

extern "C" __global__ void rerank_distance(const float* __restrict__ vecs, u32 n, u32 dim,
                                           const float* __restrict__ queries, const u32* __restrict__ cands,
                                           u32 kc, u32 shared, u32 nq, u32 metric, double* out) {
    rerank_pairs(FloatRows{vecs, dim}, n, dim, queries, cands, kc, shared, nq, metric, out);
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
                                          u32 metric, double* out) {
    const CompactRows rows{form, dim, ncells, m, half, bytes, lo, step, pos, starts, codes, centres, books, bounds, slice_of};
    rerank_pairs(rows, n, dim, queries, cands, kc, shared, nq, metric, out);
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

// ---- closeness weights (crates/genie-lsh/src/codebook/weights.rs) ---------------------------------
// A codeword's score in probed cell p is v = (|w|^2 - 2 q_s.w) + 2 c_s.w (the slice's share of the
// squared distance, less |q_s - c_s|^2), plus the cell's own share d_p = (score_p - score_0) / m.
// Per slice, lo_s is the lowest v of the nearest cell; the scale maps the widest slice range of the
// nearest cell onto `levels`; a codeword's weight is levels - floor((v + d_p - lo_s) x scale),
// 0 past the range, at most 2 levels.

__device__ __forceinline__ float order_f32(u32 k) {
    return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

// levels - floor(t) clamped to [0, 2 levels], without a branch: t >= levels + 1 (or NaN, which
// fmaxf drops) gives 0, t < -levels gives 2 levels; in between the subtraction is exact
__device__ __forceinline__ u32 closeness_weight(float t, u32 levels) {
    return (u32)fminf(fmaxf(__fsub_rn((float)levels, floorf(t)), 0.0f), (float)(2u * levels));
}

// the score of a codeword from the query's share b = |w|^2 - 2 q_s.w and the cell's c_s.w:
// b + 2 c_s.w (2x is exact)
__device__ __forceinline__ float closeness_score(float b, float cw) {
    return __fadd_rn(b, __fmul_rn(2.0f, cw));
}

// Per slice of `m`, the products of each query's slice with the slice's 256 codewords
// (`kmeans::dot`), `nq x m x 256` into `qw`: one block per PRODUCT_ROWS queries and slice, a thread
// per codeword, the queries' slices in shared memory; with `staged`, the slice's codewords too
// (rows of an odd stride, so that the threads' rows fall in different banks), read coalesced once
// per block instead of a row per thread.
#define PRODUCT_ROWS 32u
extern "C" __global__ void codeword_products(const float* __restrict__ books, const u32* __restrict__ bounds,
                                             u32 m, u32 dim, const float* __restrict__ queries, u32 nq,
                                             float* __restrict__ qw, u32 staged) {
    extern __shared__ float xs[];
    const u32 s = blockIdx.y, lo = bounds[s], w = bounds[s + 1] - lo;
    const u32 q0 = blockIdx.x * PRODUCT_ROWS, nr = min(PRODUCT_ROWS, nq - q0);
    for (u32 i = threadIdx.x; i < PRODUCT_ROWS * w; i += blockDim.x) {
        const u32 r = i / w;
        xs[i] = r < nr ? queries[(u64)(q0 + r) * dim + lo + (i - r * w)] : 0.0f;
    }
    const float* book = books + (u64)256u * lo;
    u32 stride = w;
    if (staged) {
        float* sb = xs + PRODUCT_ROWS * w;
        stride = w | 1u;
        for (u32 i = threadIdx.x; i < 256u * w; i += blockDim.x) {
            const u32 j = i / w;
            sb[j * stride + (i - j * w)] = book[i];
        }
        book = sb;
    }
    __syncthreads();
    for (u32 j = threadIdx.x; j < 256u; j += blockDim.x)
        for (u32 r = 0; r < nr; ++r)
            qw[((u64)(q0 + r) * m + s) * 256u + j] = dot8(xs + r * w, book + (u64)j * stride, w);
}

// Per object, in cell order, its slices' cross products with its codes' codewords in its cell,
// `terms[i x m + s] = cross[(cell x m + s) x 256 + codes[i x m + s]]`: what the closeness scan
// reads per slice, contiguous per object instead of a gather from the cell's table.
extern "C" __global__ void object_terms(const u32* __restrict__ starts, u32 ncells,
                                        const unsigned char* __restrict__ codes, u32 m,
                                        const float* __restrict__ cross, float* __restrict__ terms) {
    for (u32 cell = blockIdx.x; cell < ncells; cell += gridDim.x) {
        const u64 lo = (u64)starts[cell] * m, hi = (u64)starts[cell + 1] * m;
        const float* cw = cross + (u64)cell * m * 256u;
        for (u64 i = lo + threadIdx.x; i < hi; i += blockDim.x) {
            const u32 s = (u32)(i % m);
            terms[i] = cw[s * 256u + codes[i]];
        }
    }
}

// The weight of slice `s` (lowest score `lo`) of an object of code `code` whose cross product with
// it is `cw`, in a probed cell of offset `d`.
__device__ __forceinline__ u32 closeness_lo(const float* qw, float lo, u32 s, u32 code, float cw, float d,
                                            float scale, u32 levels) {
    const float u = __fadd_rn(closeness_score(qw[s * 256u + code], cw), d);
    return closeness_weight(__fmul_rn(__fsub_rn(u, lo), scale), levels);
}

// The weight of slice `s` of an object of code `code` whose cross product with it is `cw`, in a
// probed cell of offset `d`.
__device__ __forceinline__ u32 closeness_one(const float* qw, const float* lo_s, u32 s, u32 code, float cw,
                                             float d, float scale, u32 levels) {
    return closeness_lo(qw, lo_s[s], s, code, cw, d, scale, levels);
}

// Query `q`'s closeness state: its codeword products (from `qw_all`) into shared memory, per slice
// the lowest score of its nearest cell, and its scale.
__device__ void closeness_begin(u32 q, u32 m, const u32* __restrict__ cells, u32 probes,
                                const float* __restrict__ bnorms, const float* __restrict__ cross,
                                const float* __restrict__ qw_all, u32 levels, float* qw, float* lo_s,
                                float* s_scale) {
    __shared__ u32 s_range;
    const u32 tid = threadIdx.x, bd = blockDim.x, lane = tid & 31u;
    if (tid == 0) s_range = 0u;
    // |w|^2 - 2 q_s.w: the query's share of each codeword's score
    for (u32 i = tid; i < m * 256u; i += bd)
        qw[i] = __fsub_rn(bnorms[i], __fmul_rn(2.0f, qw_all[(u64)q * m * 256u + i]));
    __syncthreads();
    const u32 c0 = cells[(u64)q * probes];
    for (u32 s = tid >> 5; s < m; s += bd >> 5) {
        u32 kmin = 0xffffffffu, kmax = 0u;
        if (c0 != 0xffffffffu) {
            for (u32 j = lane; j < 256u; j += 32u) {
                const u32 i = s * 256u + j;
                const u32 k = f32_order(closeness_score(qw[i], cross[((u64)c0 * m + s) * 256u + j]));
                kmin = min(kmin, k);
                kmax = max(kmax, k);
            }
        }
#pragma unroll
        for (u32 o = 16; o > 0; o >>= 1) {
            kmin = min(kmin, __shfl_xor_sync(0xffffffffu, kmin, o));
            kmax = max(kmax, __shfl_xor_sync(0xffffffffu, kmax, o));
        }
        if (lane == 0) {
            const float lo = c0 != 0xffffffffu ? order_f32(kmin) : 0.0f;
            const float hi = c0 != 0xffffffffu ? order_f32(kmax) : 0.0f;
            lo_s[s] = lo;
            atomicMax(&s_range, f32_order(__fsub_rn(hi, lo)));
        }
    }
    __syncthreads();
    if (tid == 0) {
        const float range = order_f32(s_range);
        *s_scale = range > 0.0f ? __fdiv_rn((float)levels, range) : 0.0f;
    }
}

// A quarter (`part`) of object `i`'s closeness count: its slices part, part + 4, ... in cell `cell`
// of offset `d`.
__device__ __forceinline__ u32 closeness_object(u32 i, u32 cell, float d, u32 part,
                                                const unsigned char* __restrict__ codes, u32 m,
                                                const float* __restrict__ cross, const float* __restrict__ terms,
                                                const float* qw, const float* lo_s, float scale, u32 levels) {
    const unsigned char* c = codes + (u64)i * m;
    u32 cnt = 0;
    if (terms && (m & 3u) == 0) {
        // four slices a load: the object's codes and terms, contiguous (lo_s is 16-byte aligned:
        // it follows m x 256 floats of a 16-byte aligned table; the loads of several steps are
        // issued before their use)
        const uchar4* c4 = (const uchar4*)c;
        const float4* t4 = (const float4*)(terms + (u64)i * m);
        const float4* l4 = (const float4*)lo_s;
#pragma unroll 4
        for (u32 v = part; v < (m >> 2); v += 4u) {
            const uchar4 cc = c4[v];
            const float4 tt = t4[v];
            const float4 ll = l4[v];
            const u32 s = v << 2;
            cnt += closeness_lo(qw, ll.x, s, cc.x, tt.x, d, scale, levels);
            cnt += closeness_lo(qw, ll.y, s + 1u, cc.y, tt.y, d, scale, levels);
            cnt += closeness_lo(qw, ll.z, s + 2u, cc.z, tt.z, d, scale, levels);
            cnt += closeness_lo(qw, ll.w, s + 3u, cc.w, tt.w, d, scale, levels);
        }
    } else if (terms) {
        const float* t = terms + (u64)i * m;
        for (u32 s = part; s < m; s += 4u) cnt += closeness_one(qw, lo_s, s, c[s], t[s], d, scale, levels);
    } else {
        const float* cw = cross + (u64)cell * m * 256u;
        for (u32 s = part; s < m; s += 4u)
            cnt += closeness_one(qw, lo_s, s, c[s], cw[s * 256u + c[s]], d, scale, levels);
    }
    return cnt;
}

// The closeness counts of query `q`'s probed cells' objects into the scratch, in scan order (probe
// rank, then position in the cell), with their histogram; returns how many. All the probed cells
// at once, four threads per object (each a quarter of its slices; integer sums, in any order), so
// that small cells keep the block busy.
__device__ u32 closeness_scan(u32 q, const u32* __restrict__ starts, const u32* __restrict__ ids,
                              const unsigned char* __restrict__ codes, u32 m, const u32* __restrict__ cells,
                              u32 probes, const float* __restrict__ cell_scores,
                              const float* __restrict__ cross, const float* __restrict__ terms, const float* qw,
                              const float* lo_s, float scale, u32 levels, u32* sc_ids, u32* sc_counts, u32* hist, u32 bins) {
    __shared__ u32 s_first[65], s_probes, s_cell[64], s_start[64];
    __shared__ float s_d[64];
    const u32 tid = threadIdx.x, bd = blockDim.x, lane = tid & 31u;
    const float inv_m = __fdiv_rn(1.0f, (float)m);
    const float first = cell_scores[(u64)q * probes];
    u32 base = 0;
    // probes 64 at a time, their objects one after the other
    for (u32 p0 = 0; p0 < probes; p0 += 64u) {
        // the first warp reads the chunk's cells (up to the first missing one), their first objects
        // and offsets, two probes a lane, and sums their sizes; an object's search then reads only
        // shared memory before its codes
        if (tid < 32u) {
            u32 size[2], miss[2];
#pragma unroll
            for (u32 h = 0; h < 2u; ++h) {
                const u32 p = h * 32u + lane;
                const u32 cell = p0 + p < probes ? cells[(u64)q * probes + p0 + p] : 0xffffffffu;
                size[h] = 0;
                if (cell != 0xffffffffu) {
                    const u32 lo = starts[cell];
                    size[h] = starts[cell + 1] - lo;
                    s_cell[p] = cell;
                    s_start[p] = lo;
                    s_d[p] = __fmul_rn(__fsub_rn(cell_scores[(u64)q * probes + p0 + p], first), inv_m);
                }
                miss[h] = __ballot_sync(0xffffffffu, cell == 0xffffffffu);
            }
            // the chunk ends at its first missing probe (past the last one, or a query's cells
            // ran out)
            const u32 np = miss[0] != 0u ? __ffs(miss[0]) - 1u : (miss[1] != 0u ? 31u + __ffs(miss[1]) : 64u);
            u32 run = 0;
#pragma unroll
            for (u32 h = 0; h < 2u; ++h) {
                const u32 p = h * 32u + lane;
                u32 x = p < np ? size[h] : 0u;
#pragma unroll
                for (u32 o = 1; o < 32u; o <<= 1) {
                    const u32 y = __shfl_up_sync(0xffffffffu, x, o);
                    if (lane >= o) x += y;
                }
                const u32 incl = run + x;
                if (p < np) s_first[p + 1u] = incl;
                run += __shfl_sync(0xffffffffu, x, 31);
            }
            if (lane == 0) {
                s_first[0] = 0u;
                s_probes = np;
            }
        }
        __syncthreads();
        const u32 np = s_probes, total = s_first[np];
        const u32 rounds = (total * 4u + bd - 1u) / bd;
        // two objects a thread at a time, both computed whole (the last round's past the end on the
        // last object, then dropped), so that the loads of the second are in flight during the
        // first's arithmetic
        const u32 part = tid & 3u;
        for (u32 r = 0; r < rounds; r += 2u) {
            u32 cnt[2], id[2], at[2];
#pragma unroll
            for (u32 h = 0; h < 2u; ++h) {
                at[h] = ((r + h) * bd + tid) >> 2;
                const u32 a = min(at[h], total - 1u);
                u32 p = 0, hi = np;  // s_first[p] <= a < s_first[hi]
                while (hi - p > 1) {
                    const u32 mid = (p + hi) >> 1;
                    if (s_first[mid] <= a) p = mid; else hi = mid;
                }
                const u32 i = s_start[p] + (a - s_first[p]);
                cnt[h] = closeness_object(i, s_cell[p], s_d[p], part, codes, m, cross, terms, qw, lo_s, scale,
                                          levels);
                id[h] = ids[i];
            }
#pragma unroll
            for (u32 h = 0; h < 2u; ++h) {
                u32 c = cnt[h];
                c += __shfl_down_sync(0xffffffffu, c, 2, 4);
                c += __shfl_down_sync(0xffffffffu, c, 1, 4);
                if (at[h] < total && part == 0) {
                    sc_ids[base + at[h]] = id[h];
                    sc_counts[base + at[h]] = c;
                    if (c) atomicAdd(&hist[min(c, bins - 1u)], 1u);
                }
            }
        }
        base += total;
        const bool more = np == 64u;
        __syncthreads();
        if (!more) break;
    }
    return base;
}

// ---- codebook scan (crates/genie-lsh/src/codebook/scan.rs) -------------------------------------
// One block per query (grid-stride over queries). With rank weights, for each probed cell in probe
// order, a table of the query's weight per (slice, codeword) is set in shared memory from its
// picks, and every object of the cell gets its hit count: the sum over slices of the weight of its
// code; with closeness weights `closeness_scan` computes each object's weights from its codes. The counts
// go to the block's scratch in scan order (probe rank, then position in the cell) with a
// histogram of counts; the candidates are then the objects whose count exceeds the threshold T
// (the largest count at which `cand` objects are reached) and the first ties at T in scan order:
// the CPU's stable sort by count, descending, cut to `cand`. They are written in scan order.

__device__ __forceinline__ u32 block_excl_scan(u32 v, u32* warp_sums, u32* total) {
    const u32 lane = threadIdx.x & 31u, w = threadIdx.x >> 5, nw = (blockDim.x + 31u) >> 5;
    u32 x = v;
#pragma unroll
    for (u32 o = 1; o < 32u; o <<= 1) {
        const u32 y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31u) warp_sums[w] = x;
    __syncthreads();
    if (w == 0) {
        u32 s = lane < nw ? warp_sums[lane] : 0u;
#pragma unroll
        for (u32 o = 1; o < 32u; o <<= 1) {
            const u32 y = __shfl_up_sync(0xffffffffu, s, o);
            if (lane >= o) s += y;
        }
        if (lane < nw) warp_sums[lane] = s;
    }
    __syncthreads();
    const u32 before = w ? warp_sums[w - 1] : 0u;
    *total = warp_sums[nw - 1];
    __syncthreads();
    return before + x - v;
}

extern "C" __global__ void codebook_scan(const u32* __restrict__ starts, const u32* __restrict__ ids,
                                         const unsigned char* __restrict__ codes, u32 subspaces,
                                         const u32* __restrict__ cells, u32 probes,
                                         const unsigned char* __restrict__ picks, u32 entries, u32 weighted,
                                         u32 levels, const float* __restrict__ cell_scores,
                                         const float* __restrict__ qw_all, const float* __restrict__ bnorms,
                                         const float* __restrict__ cross, const float* __restrict__ terms, u32 use_terms,
                                         u32 nq, u32 width, u32* scratch_ids, u32* scratch_counts, u32 bins,
                                         u32 cand, u32* out_ids, u32* out_counts, u32* out_n) {
    extern __shared__ u32 smem[];
    u32* hist = smem;
    // rank weights: a table of the query's weight per (slice, codeword) of the probed cell;
    // closeness weights: the query's codeword products, per slice its lowest score in the nearest
    // cell, and the query's scale, each object's weights computed from its codes; the tables
    // start 16-byte aligned, past the histogram rounded up to 4 words
    unsigned short* lut = (unsigned short*)(smem + ((bins + 3u) & ~3u));
    float* qw = (float*)(smem + ((bins + 3u) & ~3u));
    float* lo_s = qw + subspaces * 256u;
    __shared__ u32 warp_sums[32];
    __shared__ u32 s_threshold, s_above;
    __shared__ float s_scale;
    const u32 tid = threadIdx.x, bd = blockDim.x;
    u32* sc_ids = scratch_ids + (u64)blockIdx.x * width;
    u32* sc_counts = scratch_counts + (u64)blockIdx.x * width;
    for (u32 q = blockIdx.x; q < nq; q += gridDim.x) {
        for (u32 i = tid; i < bins; i += bd) hist[i] = 0u;
        if (levels) closeness_begin(q, subspaces, cells, probes, bnorms, cross, qw_all, levels, qw, lo_s, &s_scale);
        __syncthreads();
        u32 pos = 0;
        if (levels) {
            pos = closeness_scan(q, starts, ids, codes, subspaces, cells, probes, cell_scores, cross,
                                 use_terms ? terms : nullptr, qw, lo_s,
                                 s_scale, levels, sc_ids, sc_counts, hist, bins);
        } else {
            for (u32 p = 0; p < probes; ++p) {
                const u32 cell = cells[(u64)q * probes + p];
                if (cell == 0xffffffffu) break;
                for (u32 i = tid; i < subspaces * 256u; i += bd) lut[i] = 0;
                __syncthreads();
                const unsigned char* pk = picks + ((u64)q * probes + p) * subspaces * entries;
                for (u32 i = tid; i < subspaces * entries; i += bd) {
                    const u32 s = i / entries, r = i - s * entries;
                    lut[s * 256u + pk[i]] = (unsigned short)(weighted ? entries - r : 1u);
                }
                __syncthreads();
                const u32 lo = starts[cell], hi = starts[cell + 1];
                for (u32 i = lo + tid; i < hi; i += bd) {
                    const unsigned char* c = codes + (u64)i * subspaces;
                    u32 cnt = 0;
                    for (u32 s = 0; s < subspaces; ++s) cnt += lut[s * 256u + c[s]];
                    sc_ids[pos + (i - lo)] = ids[i];
                    sc_counts[pos + (i - lo)] = cnt;
                    if (cnt) atomicAdd(&hist[min(cnt, bins - 1u)], 1u);
                }
                pos += hi - lo;
                __syncthreads();
            }
        }
        // the threshold T: the largest count whose objects and those above reach `cand` (1 when
        // none does), by suffix sums of the histogram over the block
        {
            const u32 nr = bins - 1u, per = (nr + bd - 1u) / bd;
            const u32 r0 = min(tid * per, nr), r1 = min(r0 + per, nr);
            u32 sum = 0;
            for (u32 r = r0; r < r1; ++r) sum += hist[bins - 1u - r];
            u32 total;
            u32 run = block_excl_scan(sum, warp_sums, &total);
            if (tid == 0) {
                s_threshold = cand ? 1u : bins - 1u;
                s_above = cand ? total - hist[1] : 0u;
            }
            __syncthreads();
            if (cand && run < cand) {
                for (u32 r = r0; r < r1; ++r) {
                    const u32 c = bins - 1u - r, h = hist[c];
                    if (run + h >= cand) {
                        s_threshold = c;
                        s_above = run;
                        break;
                    }
                    run += h;
                }
            }
            __syncthreads();
        }
        const u32 t = s_threshold, need = min(cand - min(s_above, cand), hist[s_threshold]);
        u32 taken = 0, ties = 0;
        for (u32 base = 0; base < pos; base += bd) {
            const u32 i = base + tid;
            const u32 cnt = i < pos ? sc_counts[i] : 0u;
            const u32 tie = cnt == t ? 1u : 0u;
            u32 tie_total;
            const u32 tie_rank = ties + block_excl_scan(tie, warp_sums, &tie_total);
            const u32 sel = (cnt > t || (tie && tie_rank < need)) ? 1u : 0u;
            u32 sel_total;
            const u32 at = taken + block_excl_scan(sel, warp_sums, &sel_total);
            if (sel) {
                out_ids[(u64)q * cand + at] = sc_ids[i];
                out_counts[(u64)q * cand + at] = cnt;
            }
            ties += tie_total;
            taken += sel_total;
        }
        for (u32 j = taken + tid; j < cand; j += bd) {
            out_ids[(u64)q * cand + j] = 0xffffffffu;
            out_counts[(u64)q * cand + j] = 0u;
        }
        if (tid == 0) out_n[q] = taken;
        __syncthreads();
    }
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

__device__ __forceinline__ u64 total_order(double x) {
    const i64 i = __double_as_longlong(x);
    return (u64)(i ^ (i64)(((u64)(i >> 63)) >> 1)) ^ 0x8000000000000000ull;
}

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
                const i64 bits = (i64)(b.d ^ 0x8000000000000000ull);
                top_dist[o] = __longlong_as_double(bits ^ (i64)(((u64)(bits >> 63)) >> 1));
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

// One warp per row of `scores` (`ncells` wide): the `top` smallest by (score by its total order,
// index), `smallest`'s order, into `out_idx` (u32::MAX past the row) and their scores.
extern "C" __global__ void smallest_rows(const float* __restrict__ scores, u32 nrows, u32 ncells, u32 top,
                                         u32* __restrict__ out_idx, float* __restrict__ out_scores) {
    const u32 lane = threadIdx.x & 31u;
    const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
    for (u64 r = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < nrows; r += warps) {
        const float* row = scores + r * ncells;
        const u32 rounds = min(top, ncells);
        u64 last = 0;
        for (u32 k = 0; k < rounds; ++k) {
            u64 best = 0xffffffffffffffffull;
            for (u32 c = lane; c < ncells; c += 32u) {
                const u64 key = ((u64)f32_order(row[c]) << 32) | c;
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
        for (u32 k = rounds + lane; k < top; k += 32u) {
            out_idx[r * top + k] = 0xffffffffu;
            out_scores[r * top + k] = 0.0f;
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

// The codebook scan of kernels/vectors.cu (one module: this part follows it): closeness weights and
// the scan of a batch's probed cells.

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

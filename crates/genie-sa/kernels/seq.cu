// Sequences on the device (crates/genie-core/src/backend/cuda/sequences.rs): every query's objects
// within its exact k-th smallest edit distance, over all the resident sequences, by the
// bit-parallel algorithm of Myers in Hyyro's global form (crates/genie-sa/src/edit_distance.rs,
// whose `advance` this is, word for word): a word per 64 pattern symbols, words chained by their
// horizontal deltas. Symbols are dense ids of the indexed sequences' alphabet; a query symbol
// outside it (an id >= `alphabet`) matches nothing.

#define SEQ_MAX_WORDS 8u
#define SEQ_BINS 1024u

typedef unsigned short u16;
typedef unsigned char u8;

template <typename W>
__device__ __forceinline__ int seq_advance(W& pv, W& mv, W eq, int hin, W high) {
    const W xv = eq | mv;
    if (hin < 0) eq |= (W)1;
    const W xh = (((eq & pv) + pv) ^ pv) | eq;
    W ph = mv | ~(xh | pv);
    W mh = pv & xh;
    const int hout = (ph & high) ? 1 : ((mh & high) ? -1 : 0);
    ph <<= 1;
    mh <<= 1;
    if (hin < 0) {
        mh |= (W)1;
    } else if (hin > 0) {
        ph |= (W)1;
    }
    pv = mh | ~(xv | ph);
    mv = ph & xv;
    return hout;
}

// The distance of a pattern of one word (`m` symbols, 1 to the bits of W) to `text`: seq_advance with
// a horizontal delta of +1 coming in, in the narrowest word that holds the pattern (a 64-bit
// operation is two 32-bit ones). Carries only move up, so the low bits of the 64-bit masks give
// the same low bits here.
template <typename W>
__device__ __forceinline__ u32 seq_distance_one(const u64* peq, u32 m, const u16* __restrict__ text, u32 len) {
    const W high = (W)1 << (m - 1);
    W pv = ~(W)0, mv = (W)0;
    u32 score = m;
    for (u32 i = 0; i < len; ++i) score += seq_advance<W>(pv, mv, (W)peq[text[i]], 1, high);
    return score;
}

// The edit distance between the pattern of `m` symbols (its masks `peq`, `words` per symbol) and
// `text` of `len` symbols.
__device__ u32 seq_distance(const u64* peq, u32 words, u32 m, const u16* __restrict__ text, u32 len) {
    if (m == 0) return len;
    if (m <= 32u) return seq_distance_one<unsigned int>(peq, m, text, len);
    if (words == 1) return seq_distance_one<u64>(peq, m, text, len);
    u32 score = m;
    u64 pv[SEQ_MAX_WORDS], mv[SEQ_MAX_WORDS];
    for (u32 b = 0; b < words; ++b) {
        pv[b] = ~0ull;
        mv[b] = 0ull;
    }
    const u64 last_high = 1ull << ((m - 1) & 63u);
    for (u32 i = 0; i < len; ++i) {
        const u64* eq = peq + (u64)text[i] * words;
        int h = 1;
        for (u32 b = 0; b < words; ++b) h = seq_advance<u64>(pv[b], mv[b], eq[b], h, b + 1 == words ? last_high : (1ull << 63));
        score += h;
    }
    return score;
}

// Query `q`'s match masks into shared memory (`words` per dense symbol, zeroed first); returns its
// length. Every thread of the block calls it; the masks are ready when it returns.
__device__ u32 seq_masks(u64* peq, const u16* __restrict__ qsyms, const u32* __restrict__ qstarts, u32 q,
                         u32 alphabet, u32* words_out) {
    const u32 tid = threadIdx.x, bd = blockDim.x;
    const u32 q0 = qstarts[q], m = qstarts[q + 1] - q0;
    const u32 words = m > 64u ? (m + 63u) / 64u : 1u;
    for (u32 i = tid; i < alphabet * words; i += bd) peq[i] = 0ull;
    __syncthreads();
    for (u32 i = tid; i < m; i += bd) {
        const u32 s = qsyms[q0 + i];
        if (s < alphabet) atomicOr(&peq[(u64)s * words + i / 64u], 1ull << (i & 63u));
    }
    __syncthreads();
    *words_out = words;
    return m;
}

// One block per query (grid-stride): the pattern's masks in shared memory; pass 1 histograms the
// distances of every object within `taus[q]` (an upper bound of the k-th smallest distance, at most
// SEQ_BINS - 1; objects whose length differs by more are skipped, as the distance is at least the
// difference); the k-th smallest distance tau follows (taus[q] when fewer than k lie within);
// pass 2 writes every object within tau, up to `cap` per query, in any order. `out_n[q]` is their
// number, 0xffffffff when more than `cap`. Pass 1 keeps each distance it computes, capped at 255, in
// the block's `n` bytes of `scratch`, so pass 2 computes again only those of 255 when tau is 255 or
// more (an object it reads passes the length filter at tau <= the bound, so pass 1 wrote it).
extern "C" __global__ void seq_nearest(const u16* __restrict__ syms, const u32* __restrict__ starts, u32 n,
                                       const u16* __restrict__ qsyms, const u32* __restrict__ qstarts,
                                       const u32* __restrict__ taus, u32 nq, u32 k, u32 alphabet, u32 cap,
                                       u32* __restrict__ out_ids, u32* __restrict__ out_dist,
                                       u32* __restrict__ out_n, u8* __restrict__ scratch) {
    extern __shared__ u64 peq[];
    __shared__ u32 hist[SEQ_BINS];
    u8* const seen = scratch + (u64)blockIdx.x * n;
    __shared__ u32 s_tau, s_count;
    const u32 tid = threadIdx.x, bd = blockDim.x;
    for (u32 q = blockIdx.x; q < nq; q += gridDim.x) {
        for (u32 i = tid; i < SEQ_BINS; i += bd) hist[i] = 0u;
        u32 words;
        const u32 m = seq_masks(peq, qsyms, qstarts, q, alphabet, &words);
        const u32 bound = min(taus[q], SEQ_BINS - 1u);
        for (u32 j = tid; j < n; j += bd) {
            const u32 lo = starts[j], len = starts[j + 1] - lo;
            if ((len > m ? len - m : m - len) > bound) continue;
            const u32 d = seq_distance(peq, words, m, syms + lo, len);
            seen[j] = (u8)min(d, 255u);
            if (d <= bound) atomicAdd(&hist[d], 1u);
        }
        __syncthreads();
        if (tid == 0) {
            u32 cum = 0, tau = bound;
            for (u32 t = 0; t <= bound; ++t) {
                cum += hist[t];
                if (cum >= k) {
                    tau = t;
                    break;
                }
            }
            s_tau = tau;
            s_count = 0u;
        }
        __syncthreads();
        const u32 tau = s_tau;
        for (u32 j = tid; j < n; j += bd) {
            const u32 lo = starts[j], len = starts[j + 1] - lo;
            if ((len > m ? len - m : m - len) > tau) continue;
            u32 d = seen[j];
            if (d == 255u && tau >= 255u) d = seq_distance(peq, words, m, syms + lo, len);
            if (d <= tau) {
                const u32 slot = atomicAdd(&s_count, 1u);
                if (slot < cap) {
                    out_ids[(u64)q * cap + slot] = j;
                    out_dist[(u64)q * cap + slot] = d;
                }
            }
        }
        __syncthreads();
        if (tid == 0) out_n[q] = s_count > cap ? 0xffffffffu : s_count;
        __syncthreads();
    }
}

// The distance from each query's pattern to each of its candidates: one block per query
// (grid-stride), its masks in shared memory, a thread per candidate; `cand_starts` has `nq + 1`
// offsets into `cand_ids`, and `out` a distance per candidate (0xffffffff for an id past the
// sequences).
extern "C" __global__ void seq_distances(const u16* __restrict__ syms, const u32* __restrict__ starts, u32 n,
                                         const u16* __restrict__ qsyms, const u32* __restrict__ qstarts, u32 nq,
                                         u32 alphabet, const u32* __restrict__ cand_ids,
                                         const u32* __restrict__ cand_starts, u32* __restrict__ out) {
    extern __shared__ u64 peq[];
    const u32 tid = threadIdx.x, bd = blockDim.x;
    for (u32 q = blockIdx.x; q < nq; q += gridDim.x) {
        u32 words;
        const u32 m = seq_masks(peq, qsyms, qstarts, q, alphabet, &words);
        for (u32 c = cand_starts[q] + tid; c < cand_starts[q + 1]; c += bd) {
            const u32 j = cand_ids[c];
            out[c] = j < n ? seq_distance(peq, words, m, syms + starts[j], starts[j + 1] - starts[j]) : 0xffffffffu;
        }
        __syncthreads();
    }
}

// ---- tiled counting (the fast path of the c-PQ match) -------------------------------------------
//
// One block per (query, range of object tiles). A tile's counts live in shared memory as bytes
// (4 objects per 32-bit word, so a shared atomic add updates one byte and never carries: counts
// stay within a bound <= 255; 16-bit counters, 2 a word, serve bounds <= 1023). Every posting list of the query is sorted by object id, so the
// block keeps one cursor per list and sweeps its tiles in order: only the first tile needs a
// binary search. When a tile is complete its counts are final:
//   - they are written to the query's count array (8 bits per object, the bitmap counter layout
//     with log_bits = 3), which the select kernel reads for exact counts and the tie fill;
//   - the tile's suffix histogram feeds the ZipperArray for every value >= AT, AT advances as in
//     Algorithm 1, and only objects whose count reaches the new AT enter the query's candidate
//     list (list_insert in cpq.cu: each object once, with its final count).
// The extraction argument of the global kernel holds unchanged: ZA never over-counts, and every
// object whose final count reaches the final AT is inserted when its tile completes.
// A sweep (`carried` set, one launch per range of tiles) counts one range of every query of the
// batch, so that the queries that share a list read its slice of the range while it is in L2; each
// list's cursor is kept in `carried` (TILE_MAX_LISTS a query) for the launch of the next range.
//
// lists: per query, `list_start[q]..list_start[q + 1]` index (lo, hi, weight, first) records of
// 4 x u32: keyword ranges whose every keyword is one list (empty ones included), list `first + i`
// being keyword `lo + i`; a list's postings are `offsets[kw]..offsets[kw + 1]` of the index, so
// range items travel as they are, not expanded into lists.
//
// Dense lists (SearchParams::gpu_dense): a keyword list holding a large share of the objects is
// also kept as a bitmap over the objects (bit o % 32 of word o / 32; `dense_words` words a list,
// whole 32 K-object tiles). A query's dense lists are `dense_start[q]..dense_start[q + 1]` records
// of 2 x u32 (bitmap number, weight), and they are not among its `lists`. Each thread of a block
// owns 32 objects of the tile, adds every dense list's bits to them in registers (4 counters a
// word spread by a multiply, never carrying since a count stays within the bound) and stores
// them: one coalesced load per 32 objects and list, no atomics. The id lists then add on top.

// Counter words per tile: 8192 (32 KB of shared memory), or 16384 for the wide variants, which
// halve the per-(list, tile) work when a query has many short lists (the counters are then in
// dynamic shared memory: above the 48 KB of static shared memory).
#define TILE_WORDS_NARROW 8192u
#define TILE_WORDS_WIDE 16384u
#define TILE_MAX_LISTS 2048u
#define BALANCE_LISTS 32u

// BITS = 8: 4 counters a word, bounds <= 255; BITS = 16: 2 counters a word, bounds <= 1023 (the
// histogram's size). A tile holds TILE_WORDS * 32 / BITS objects.
// List l of a query's ranges `qr` (nr records, ascending `first`, nl lists): its postings and
// weight. Single-keyword items (LSH functions, words) give one range per list: no search.
__device__ __forceinline__ void list_at(const u32* __restrict__ qr, u32 nr, u32 nl, u32 l,
                                        const u64* __restrict__ offsets, u64& start, u64& end, u32& w) {
    u32 lo = 0, hi = nr;  // the last range whose first list is <= l
    if (nr == nl) {
        lo = l;
    } else {
        while (hi - lo > 1) {
            const u32 mid = (lo + hi) >> 1;
            if (qr[4 * mid + 3] <= l) lo = mid; else hi = mid;
        }
    }
    const u32 kw = qr[4 * lo] + (l - qr[4 * lo + 3]);
    start = offsets[kw];
    end = offsets[kw + 1];
    w = qr[4 * lo + 2];
}

// The field mask of the counter word of objects o..o + 32 / BITS (in one word of `live`, as o is a
// multiple of 32 / BITS): all ones in each allowed object's field, zeros in a denied one's.
template <u32 BITS>
__device__ __forceinline__ u32 live_fields(const u32* __restrict__ live, u32 o) {
    const u32 bits = __ldg(&live[o >> 5]) >> (o & 31);
    if (BITS == 8) return (((bits & 0xFu) * 0x00204081u) & 0x01010101u) * 0xFFu;
    const u32 pair = bits & 0x3u;
    return ((pair | (pair << 15)) & 0x00010001u) * 0xFFFFu;
}

// Whether a counter word holds a field of at least `at` (>= 1): for 8-bit fields and `at` <= 128,
// and for 16-bit fields (counts <= 1023), one add: a field below 2^(BITS-1) gains its top bit by
// adding 2^(BITS-1) - at exactly when it reaches `at`, and never carries; an 8-bit field of 128 or
// more has its top bit already (its carry may only set a neighbour's, when the answer is yes
// anyway). Past 128 at 8 bits, the fields are compared one by one.
template <u32 BITS>
struct AtLeast {
    u32 at, add;
    __device__ __forceinline__ explicit AtLeast(u32 a)
        : at(a), add(BITS == 8 ? (a <= 128u ? (128u - a) * 0x01010101u : 0u) : (0x8000u - a) * 0x00010001u) {}
    __device__ __forceinline__ bool any(u32 c) const {
        if (BITS == 8 && at > 128u) return at <= 255u && __vcmpgeu4(c, at * 0x01010101u) != 0;
        return (((c + add) | c) & (BITS == 8 ? 0x80808080u : 0x80008000u)) != 0;
    }
};

// The postings of chunk `c` of a tile's few lists (128 from a list's cursor, dealt to warps; none
// past the last chunk, `chunk_start[nl]`) into `ids` (0xFFFFFFFF where there is none), and their
// list's weight.
template <bool PACKED>
__device__ __forceinline__ void fetch_chunk(const Postings& P, u32 nl, const u64* lstart, const u32* lweight,
                                            const u32* chunk_start, const u32* cursor, const u32* seg_end, u32 c,
                                            u32 lane, u32 (&ids)[4], u32& w) {
    w = 0;
#pragma unroll
    for (u32 j = 0; j < 4; ++j) ids[j] = 0xFFFFFFFFu;
    if (c >= chunk_start[nl]) return;
    u32 lo = 0, hi = nl;  // the last l with chunk_start[l] <= c
    while (hi - lo > 1) {
        const u32 mid = (lo + hi) >> 1;
        if (chunk_start[mid] <= c) lo = mid; else hi = mid;
    }
    w = lweight[lo];
    const ListReader<PACKED> list(P, lstart[lo]);
    const u32 first = cursor[lo] + (c - chunk_start[lo]) * 128;
    const u32 stop = seg_end[lo];
#pragma unroll
    for (u32 j = 0; j < 4; ++j) {
        const u32 i = first + 32 * j + lane;
        if (i < stop) ids[j] = list[i];
    }
}

// List `l` of the query from the block's table (none past `nl`: an empty list): its first
// posting, length, weight and cursor, and the first 128 postings from the cursor (0xFFFFFFFF past
// its end), 4 a lane.
template <bool PACKED>
__device__ __forceinline__ void open_list(const Postings& P, const u64* lstart, const u32* llen, const u32* lweight,
                                          const u32* cursor, u32 l, u32 nl, u32 lane, u64& start, u32& len, u32& w,
                                          u32& cur, u32 (&ids)[4]) {
    start = 0;
    len = 0;
    w = 0;
    cur = 0;
    if (l < nl) {
        start = lstart[l];
        len = llen[l];
        w = lweight[l];
        cur = cursor[l];
    }
    ListReader<PACKED>(P, start).four(cur + lane, len, ids);
}

template <u32 BITS, u32 TILE_WORDS, bool PACKED>
__device__ __forceinline__ void tile_body(
    const Postings P, const u32* __restrict__ live, const u64* __restrict__ offsets, const u32* __restrict__ lists,
    const u32* __restrict__ list_start, u32 nq, u32 n, u32 tiles_per_block, const u32* __restrict__ meta, u32* bitmaps, u32* za, u32* audit,
    u64* tables, u32* flags, u32 k, const u32* __restrict__ dense_bits, u64 dense_words,
    const u32* __restrict__ dense_recs, const u32* __restrict__ dense_start, u32 sweep, u32* carried) {
    constexpr u32 PER = 32 / BITS;                     // counters a word
    constexpr u32 PER_LOG = BITS == 8 ? 2 : 1;
    constexpr u32 FMASK = (1u << BITS) - 1u;
    constexpr u32 TILE_OBJECTS = TILE_WORDS * PER;
    constexpr u32 HBINS = BITS == 8 ? 256u : 1024u;
    extern __shared__ __align__(16) u32 counts[];  // TILE_WORDS words, sized at launch
    __shared__ u32 cursor[TILE_MAX_LISTS];  // offset from the list's first posting
    // the query's lists, found once a job: each list's first posting, length and weight
    __shared__ u64 lstart[TILE_MAX_LISTS];
    __shared__ u32 llen[TILE_MAX_LISTS];
    __shared__ u32 lweight[TILE_MAX_LISTS];
    __shared__ u32 hist[HBINS];
    __shared__ u32 seg_end[BALANCE_LISTS];         // each list's end in the current tile
    __shared__ u32 chunk_start[BALANCE_LISTS + 1];  // prefix sums of 128-posting chunks
    __shared__ u32 s_at;                            // AT when the tile's counts are final
    const u32 ntiles = (n + TILE_OBJECTS - 1) / TILE_OBJECTS;
    // a sweep (`carried` set): this launch counts tile range `sweep` of every query, each list's
    // cursor carried from the launch of the range before
    const u32 chunks = carried != nullptr ? 1u : (ntiles + tiles_per_block - 1) / tiles_per_block;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (u64 job = blockIdx.x; job < (u64)nq * chunks; job += gridDim.x) {
        const u32 q = (u32)(job / chunks), chunk = carried != nullptr ? sweep : (u32)(job % chunks);
        const u32 t0 = chunk * tiles_per_block, t1 = min(ntiles, t0 + tiles_per_block);
        const QueryMeta m = load_meta(meta, q);
        u32* qcounts = bitmaps + m.bitmap_off;
        u32* qza = za + m.za_off;
        u32* qat = audit + q;
        u64* tab = tables + m.table_off;
        const u32 r0 = list_start[q], nr = list_start[q + 1] - r0;
        const u32* qr = lists + 4 * (u64)r0;
        const u32 nl = nr == 0 ? 0u : qr[4 * (nr - 1) + 3] + (qr[4 * (nr - 1) + 1] - qr[4 * (nr - 1)] + 1);
        const u32 nd = dense_start[q + 1] - dense_start[q];
        const u32* qd = dense_recs + 2 * (u64)dense_start[q];
        // first tile: each list's cursor, carried from the range before, or 0 at the first object,
        // else by binary search
        const u32 first_id = t0 * TILE_OBJECTS;
        for (u32 l = threadIdx.x; l < nl; l += blockDim.x) {
            u64 start, hi;
            u32 w;
            list_at(qr, nr, nl, l, offsets, start, hi, w);
            lstart[l] = start;
            llen[l] = (u32)(hi - start);
            lweight[l] = w;
            if (carried != nullptr && t0 > 0) {
                cursor[l] = carried[(u64)q * TILE_MAX_LISTS + l];
                continue;
            }
            if (first_id == 0) {
                cursor[l] = 0;
                continue;
            }
            u64 lo = start;
            while (lo < hi) {
                const u64 mid = (lo + hi) >> 1;
                if (P.at<PACKED>(mid) < first_id) lo = mid + 1; else hi = mid;
            }
            cursor[l] = (u32)(lo - start);
        }
        for (u32 t = t0; t < t1; ++t) {
            const u32 base = t * TILE_OBJECTS, end_id = min(n, base + TILE_OBJECTS);
            for (u32 i = 4 * threadIdx.x; i < TILE_WORDS; i += 4 * blockDim.x)
                *reinterpret_cast<uint4*>(&counts[i]) = make_uint4(0, 0, 0, 0);
            for (u32 i = threadIdx.x; i < HBINS; i += blockDim.x) hist[i] = 0;
            __syncthreads();
            if (nd != 0) {
                constexpr u32 CW = 32 / PER;  // counter words per bitmap word
                for (u32 b = threadIdx.x; b < TILE_OBJECTS / 32; b += blockDim.x) {
                    const u64 gw = (u64)(base / 32 + b);
                    u32 acc[CW];
#pragma unroll
                    for (u32 j = 0; j < CW; ++j) acc[j] = 0;
                    for (u32 d = 0; d < nd; ++d) {
                        const u32 bits = __ldg(&dense_bits[(u64)qd[2 * d] * dense_words + gw]);
                        if (bits == 0) continue;
                        const u32 w = qd[2 * d + 1];
#pragma unroll
                        for (u32 j = 0; j < CW; ++j) {
                            if (BITS == 8) {
                                const u32 nib = (bits >> (4 * j)) & 0xFu;
                                acc[j] += ((nib * 0x00204081u) & 0x01010101u) * w;
                            } else {
                                const u32 pair = (bits >> (2 * j)) & 0x3u;
                                acc[j] += ((pair | (pair << 15)) & 0x00010001u) * w;
                            }
                        }
                    }
#pragma unroll
                    for (u32 j = 0; j < CW; ++j) counts[b * CW + j] = acc[j];
                }
                __syncthreads();
            }
            if (nl <= BALANCE_LISTS) {
                // few lists (short documents, few attributes): find each list's end in this tile,
                // then deal the tile's postings to all warps in chunks of 128, so one hot list
                // does not hold a block while its other warps idle
                for (u32 l = threadIdx.x; l < nl; l += blockDim.x) {
                    const u64 start = lstart[l];
                    u64 hi = start + llen[l];
                    u64 lo = start + cursor[l];
                    while (lo < hi) {
                        const u64 mid = (lo + hi) >> 1;
                        if (P.at<PACKED>(mid) < end_id) lo = mid + 1; else hi = mid;
                    }
                    seg_end[l] = (u32)(lo - start);
                }
                __syncthreads();
                if (threadIdx.x == 0) {
                    u32 total = 0;
                    for (u32 l = 0; l < nl; ++l) {
                        chunk_start[l] = total;
                        total += (seg_end[l] - cursor[l] + 127) / 128;
                    }
                    chunk_start[nl] = total;
                }
                __syncthreads();
                // two chunks a warp at a time, their 256 postings fetched before either is counted
                for (u32 c = warp; c < chunk_start[nl]; c += 2 * nwarps) {
                    u32 ids[2][4], w[2];
#pragma unroll
                    for (u32 h = 0; h < 2; ++h)
                        fetch_chunk<PACKED>(P, nl, lstart, lweight, chunk_start, cursor, seg_end, c + h * nwarps, lane,
                                            ids[h], w[h]);
#pragma unroll
                    for (u32 h = 0; h < 2; ++h)
#pragma unroll
                        for (u32 j = 0; j < 4; ++j)
                            if (ids[h][j] != 0xFFFFFFFFu)
                                atomicAdd(&counts[(ids[h][j] - base) >> PER_LOG], w[h] << ((ids[h][j] & (PER - 1)) * BITS));
                }
                __syncthreads();
                for (u32 l = threadIdx.x; l < nl; l += blockDim.x) cursor[l] = seg_end[l];
            } else {
                // each warp sweeps whole lists: 32 consecutive postings a step, coalesced. A list's
                // first 128 postings are fetched while the warp's list before it counts (its
                // place from the block's table): where a query has many short lists (OCR-like:
                // about 8 postings a list a tile) the warp would otherwise wait on each list's
                // loads in turn
                u64 start;
                u32 len, w, cur, ids[4];
                open_list<PACKED>(P, lstart, llen, lweight, cursor, warp, nl, lane, start, len, w, cur, ids);
                for (u32 l = warp; l < nl; l += nwarps) {
                    u64 n_start;
                    u32 n_len, n_w, n_cur, n_ids[4];
                    open_list<PACKED>(P, lstart, llen, lweight, cursor, l + nwarps, nl, lane, n_start, n_len, n_w,
                                      n_cur, n_ids);
                    const ListReader<PACKED> list(P, start);
                    // 4 x 32 postings a step; the list ascends, so the postings of this tile are a
                    // prefix of them, all 128 when the last one is. The next 128 are fetched
                    // before these are counted: the count had waited on each step's loads
                    // (Nsight Compute's stall samples, docs/journal/engine.md)
                    while (cur < len) {
                        if (__shfl_sync(0xFFFFFFFFu, ids[3], 31) < end_id) {
                            u32 next[4];
                            list.four(cur + 128 + lane, len, next);
#pragma unroll
                            for (u32 j = 0; j < 4; ++j) {
                                atomicAdd(&counts[(ids[j] - base) >> PER_LOG], w << ((ids[j] & (PER - 1)) * BITS));
                                ids[j] = next[j];
                            }
                            cur += 128;
                            continue;
                        }
                        // the tile ends within these 128: count its part, and the cursor stops there
                        u32 taken = 0;
#pragma unroll
                        for (u32 j = 0; j < 4; ++j) {
                            const bool mine = ids[j] < end_id;
                            if (mine) atomicAdd(&counts[(ids[j] - base) >> PER_LOG], w << ((ids[j] & (PER - 1)) * BITS));
                            taken += __popc(__ballot_sync(0xFFFFFFFFu, mine));
                        }
                        cur += taken;
                        break;
                    }
                    if (lane == 0) cursor[l] = cur;
                    start = n_start;
                    len = n_len;
                    w = n_w;
                    cur = n_cur;
#pragma unroll
                    for (u32 j = 0; j < 4; ++j) ids[j] = n_ids[j];
                }
            }
            // one reading of AT for the whole block, older than any the Gate makes below
            if (threadIdx.x == 0) s_at = max(ld_volatile(qat), 1u);
            __syncthreads();
            // the tile's counts are final: clear the denied objects', write them out and
            // histogram those at or above the AuditThreshold as it stands: AT only rises, and the
            // Gate and the table below read the bins from AT up, so a count below it is never
            // read there. Four words a thread at a time (a query's count words are padded to a
            // multiple of 4, and the tile's past its last object are zero), each tested for a
            // field at or above AT at once; most words have none
            const u32 words = (end_id - base + PER - 1) / PER;
            const u32 words4 = (words + 3) & ~3u;
            u32* out = qcounts + base / PER;
            if (live != nullptr) {
                for (u32 i = threadIdx.x; i < words; i += blockDim.x) {
                    const u32 c4 = counts[i];
                    if (c4 != 0) counts[i] = c4 & live_fields<BITS>(live, base + PER * i);
                }
                __syncthreads();
            }
            const u32 at_h = s_at;
            const AtLeast<BITS> reaches(at_h);
            for (u32 i = 4 * threadIdx.x; i < words4; i += 4 * blockDim.x) {
                const uint4 c = *reinterpret_cast<const uint4*>(&counts[i]);
                *reinterpret_cast<uint4*>(&out[i]) = c;
                const u32 cw[4] = {c.x, c.y, c.z, c.w};
#pragma unroll
                for (u32 h = 0; h < 4; ++h) {
                    if (!reaches.any(cw[h])) continue;
#pragma unroll
                    for (u32 j = 0; j < PER; ++j) {
                        const u32 f = (cw[h] >> (BITS * j)) & FMASK;
                        if (f >= at_h) atomicAdd(&hist[min(f, HBINS - 1)], 1u);
                    }
                }
            }
            __syncthreads();
            // suffix sums: hist[v] becomes the objects of count >= v
            if (warp == 0) {
                u32 carry = 0;
                for (int v0 = (int)HBINS - 32; v0 >= 0; v0 -= 32) {
                    u32 x = hist[v0 + (31 - lane)];
                    for (u32 d = 1; d < 32; d <<= 1) {
                        const u32 y = __shfl_up_sync(0xFFFFFFFFu, x, d);
                        if (lane >= d) x += y;
                    }
                    hist[v0 + (31 - lane)] = x + carry;
                    carry += __shfl_sync(0xFFFFFFFFu, x, 31);
                }
            }
            __syncthreads();
            // Gate: ZA[v] += objects of count >= v, for every v >= AT; then AT advances
            const u32 at0 = ld_volatile(qat);
            for (u32 v = max(at0, 1u) + threadIdx.x; v <= min(m.bound, HBINS - 1); v += blockDim.x) {
                if (hist[v] != 0) atomicAdd(&qza[v], hist[v]);
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                while (true) {
                    const u32 a = ld_volatile(qat);
                    if (a >= m.bound + 1 || ld_volatile(&qza[a]) < k) break;
                    atomicCAS(qat, a, a + 1);
                }
            }
            __syncthreads();
            // only objects at or above the AuditThreshold enter the candidate list
            const u32 at = max(ld_volatile(qat), 1u);
            if (at <= HBINS - 1 && hist[at] != 0) {
                const AtLeast<BITS> enters(at);
                for (u32 i = threadIdx.x; i < words; i += blockDim.x) {
                    const u32 c4 = counts[i];
                    if (!enters.any(c4)) continue;
#pragma unroll
                    for (u32 j = 0; j < PER; ++j) {
                        const u32 c = (c4 >> (BITS * j)) & FMASK;
                        if (c >= at && !list_insert(tab, m.slots, base + PER * i + j, c))
                            atomicOr(&flags[q], FLAG_TABLE_FULL);
                    }
                }
            }
            __syncthreads();
        }
        if (carried != nullptr)
            for (u32 l = threadIdx.x; l < nl; l += blockDim.x) carried[(u64)q * TILE_MAX_LISTS + l] = cursor[l];
    }
}

#define TILE_ARGS                                                                                         \
    POSTINGS_ARGS, const u32 *__restrict__ live, const u64 *__restrict__ offsets,      \
        const u32 *__restrict__ lists,                                                                 \
        const u32 *__restrict__ list_start,                                                            \
        u32 nq, u32 n, u32 tiles_per_block, const u32 *__restrict__ meta, u32 *bitmaps, u32 *za,          \
        u32 *audit, u64 *tables, u32 *flags, u32 k, const u32 *__restrict__ dense_bits, u64 dense_words,   \
        const u32 *__restrict__ dense_recs, const u32 *__restrict__ dense_start, u32 sweep, u32 *carried
#define TILE_CALL                                                                                     \
    Postings{postings, packed_hdr, packed_data}, live, offsets, lists, list_start, nq, n, tiles_per_block, meta, bitmaps, za, audit, tables, flags, k, \
        dense_bits, dense_words, dense_recs, dense_start, sweep, carried

// Two blocks of 512 an SM: the registers stay at 64 a thread, so that the postings fetched ahead
// do not halve the warps an SM holds.
#define TILE_ENTRY(NAME, BITS, WORDS)                                                                             \
    extern "C" __global__ void __launch_bounds__(512, 2) NAME(TILE_ARGS) { tile_body<BITS, WORDS, false>(TILE_CALL); } \
    extern "C" __global__ void __launch_bounds__(512, 2) NAME##_packed(TILE_ARGS) { tile_body<BITS, WORDS, true>(TILE_CALL); }
TILE_ENTRY(tile_match, 8, TILE_WORDS_NARROW)
TILE_ENTRY(tile_match16, 16, TILE_WORDS_NARROW)
TILE_ENTRY(tile_match_wide, 8, TILE_WORDS_WIDE)
TILE_ENTRY(tile_match16_wide, 16, TILE_WORDS_WIDE)

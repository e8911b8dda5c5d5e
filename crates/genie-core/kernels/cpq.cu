// GENIE match counting and top-k selection on the GPU (paper section III; DESIGN.md section 3).
//
// Kernels, all over one batch of queries:
//   cpq_init    - hash tables to EMPTY (the tiled count's candidate lists to empty), AuditThresholds
//                 to 1 (bitmaps and ZipperArrays are zeroed by a memset).
//   cpq_match   - one block per (query, sublist) task: Algorithm 1 per posting (bitmap counter
//                 add, Gate update, Robin Hood insert with expiry).
//   cpq_select  - one block per query: candidates of count >= AT from the hash table (exact counts
//                 from the bitmap counter, duplicates dropped) or from the tiled count's list (final
//                 counts, each object once), sorted; then the objects of count
//                 AT - 1 in ascending id order from a scan of the bitmap counter.
//   ct_match / ct_select - the count-table baseline (full u32 count array per query, then the same
//                 threshold-and-fill selection over the whole array).
// Results are identical to the CPU backend's: count descending, then id ascending.
//
// Per-query metadata (8 x u32): bitmap word offset (lo, hi), table slot offset (lo, hi),
// ZipperArray offset, log2(bits per counter), table slots (a power of two), count bound.
// Items of a batch (6 x u32): first posting (lo, hi), end posting (lo, hi), query, weight; and
// `task_start`, nitems + 1 prefix sums of the sublists per item. Task t is sublist t - task_start[i]
// of the item i with task_start[i] <= t < task_start[i + 1]: the (query, sublist) work list of
// DESIGN.md section 2, derived on the device instead of copied.
// Flags per query: 1 = hash table full, 2 = too many candidates, 4 = tie fill short; the host
// reruns flagged queries (never a wrong answer).
//
// The search's object mask (SearchParams::mask): `live`, bit o % 32 of word o / 32 set = object o
// may be returned, or null = every object. The match kernels never count a denied object:
// cpq_match and ct_match skip its postings; the tiled kernels clear its counter when its tile's
// counts are final, before they are written out, histogrammed or offered to the Gate and the hash
// table (whether id lists or dense bitmaps counted it). The select kernels then never see it.


#define EMPTY_ENTRY 0xFFFFFFFFFFFFFFFFull
#define EMPTY_ID 0xFFFFFFFFu
#define FLAG_TABLE_FULL 1u
#define FLAG_CANDIDATES 2u
#define FLAG_FILL_SHORT 4u
#define UNROLL 4u

struct QueryMeta {
    u64 bitmap_off;
    u64 table_off;
    u32 za_off;
    u32 log_bits;
    u32 slots;
    u32 bound;
};

__device__ __forceinline__ QueryMeta load_meta(const u32* meta, u32 q) {
    const u32* m = meta + 8 * (u64)q;
    QueryMeta r;
    r.bitmap_off = (u64)m[0] | ((u64)m[1] << 32);
    r.table_off = (u64)m[2] | ((u64)m[3] << 32);
    r.za_off = m[4];
    r.log_bits = m[5];
    r.slots = m[6];
    r.bound = m[7];
    return r;
}

__device__ __forceinline__ u32 ld_volatile(const u32* p) { return *(const volatile u32*)p; }
__device__ __forceinline__ u64 ld_volatile64(const u64* p) { return *(const volatile u64*)p; }

// MurmurHash3's 32-bit finalizer (common.cuh); the CPU table uses the same.
__device__ __forceinline__ u32 hash_id(u32 h) { return fmix32(h); }

// Whether object `id` may be returned: its bit of the mask `live`, or every object when `live` is
// null.
__device__ __forceinline__ bool is_live(const u32* __restrict__ live, u32 id) {
    return live == nullptr || ((__ldg(&live[id >> 5]) >> (id & 31)) & 1u) != 0;
}

// The List Array as the match kernels read it (crates/genie-core/src/packed.rs): plain (`plain`
// set), or packed in blocks of 128 postings, each the offsets from its smallest id in the block's
// width of bits. `hdr` holds per block its smallest id and first word of `data`, then the end
// word; block b's width is (hdr[2b + 3] - hdr[2b + 1]) / 4. A posting is read at its position
// alone, so every kernel reads packed lists as it reads plain ones. Each match kernel comes in both
// forms (`PACKED`, the entry points ending in `_packed`), so the plain one pays nothing for the other.
struct Postings {
    const u32* __restrict__ plain;
    const u32* __restrict__ hdr;
    const u32* __restrict__ data;
    template <bool PACKED>
    __device__ __forceinline__ u32 at(u64 p) const {
        if (!PACKED) return __ldg(&plain[p]);
        const u64 b = p >> 7;
        const uint2 h = __ldg(reinterpret_cast<const uint2*>(hdr) + b);
        const u32 w = (__ldg(&hdr[2 * b + 3]) - h.y) >> 2;
        if (w == 0) return h.x;
        const u32 bit = (u32)(p & 127u) * w;
        const u32 word = h.y + (bit >> 5), sh = bit & 31u;
        u32 v = __ldg(&data[word]) >> sh;
        if (sh + w > 32u) v |= __ldg(&data[word + 1]) << (32u - sh);
        if (w < 32u) v &= (1u << w) - 1u;
        return h.x + v;
    }
};
// Unpacks `n` packed postings into `out` (the List Array of a packed index file, put on the device
// as it is stored and unpacked there): a thread a posting, grid-stride.
extern "C" __global__ void unpack_postings(const u32* __restrict__ hdr, const u32* __restrict__ data,
                                           u32* __restrict__ out, u64 n) {
    const Postings P{nullptr, hdr, data};
    for (u64 p = (u64)blockIdx.x * blockDim.x + threadIdx.x; p < n; p += (u64)gridDim.x * blockDim.x)
        out[p] = P.at<true>(p);
}
// Sets the bits of dense lists' bitmaps (backend/cuda/dense.rs) from the postings on the device:
// list `l` (grid-stride over blockIdx.y) is postings first[l] .. first[l] + len[l] and its bitmap the
// `words` words from bits + l * words (zeroed before). `*unordered` is set where a list's ids do not
// strictly increase: a bitmap holds each object once, so such lists are left to the host.
template <bool PACKED>
__device__ __forceinline__ void dense_bitmaps_body(const Postings P, const u64* __restrict__ first,
                                                   const u32* __restrict__ len, u32 lists, u32* bits, u64 words,
                                                   u32* unordered) {
    for (u32 l = blockIdx.y; l < lists; l += gridDim.y) {
        const u64 f = first[l];
        const u32 m = len[l];
        u32* bm = bits + (u64)l * words;
        for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
            const u32 id = P.at<PACKED>(f + i);
            if ((i + 1 < m && P.at<PACKED>(f + i + 1) <= id) || (u64)(id >> 5) >= words) {
                atomicOr(unordered, 1u);
                continue;
            }
            atomicOr(&bm[id >> 5], 1u << (id & 31u));
        }
    }
}
#define DENSE_BITMAPS_ARGS POSTINGS_ARGS, const u64 *__restrict__ first, const u32 *__restrict__ len, u32 lists, u32 *bits, u64 words, u32 *unordered
#define DENSE_BITMAPS_CALL Postings{postings, packed_hdr, packed_data}, first, len, lists, bits, words, unordered
// One list's postings at 32-bit positions from its first (a list holds each object at most once):
// the tiled kernels' inner loops index a list so, in 32-bit arithmetic.
template <bool PACKED>
struct ListReader {
    const u32* __restrict__ ids;  // plain: the list's first posting
    Postings P;
    u64 start;
    __device__ __forceinline__ ListReader(const Postings& p, u64 first)
        : ids(PACKED ? nullptr : p.plain + first), P(p), start(first) {}
    __device__ __forceinline__ u32 operator[](u32 i) const {
        return PACKED ? P.at<true>(start + i) : __ldg(&ids[i]);
    }
    // Postings first, first + 32, first + 64 and first + 96 (a lane's share of a step of 128),
    // 0xFFFFFFFF past `len`. Where all four are in the list, a plain list's are read from one
    // address at fixed offsets: no address arithmetic a posting.
    __device__ __forceinline__ void four(u32 first, u32 len, u32 (&out)[4]) const {
        if (!PACKED && first + 96 < len) {
            const u32* __restrict__ p = ids + first;
#pragma unroll
            for (u32 j = 0; j < 4; ++j) out[j] = __ldg(p + 32 * j);
            return;
        }
#pragma unroll
        for (u32 j = 0; j < 4; ++j) {
            const u32 i = first + 32 * j;
            out[j] = i < len ? (*this)[i] : 0xFFFFFFFFu;
        }
    }
};
#define POSTINGS_ARGS const u32 *__restrict__ postings, const u32 *__restrict__ packed_hdr, const u32 *__restrict__ packed_data
extern "C" __global__ void dense_bitmaps(DENSE_BITMAPS_ARGS) { dense_bitmaps_body<false>(DENSE_BITMAPS_CALL); }
extern "C" __global__ void dense_bitmaps_packed(DENSE_BITMAPS_ARGS) { dense_bitmaps_body<true>(DENSE_BITMAPS_CALL); }

// ---- bitmap counter ---------------------------------------------------------------------------

struct Bitmap {
    u32* words;
    u32 log_bits;
    __device__ __forceinline__ u32 mask() const { return log_bits == 5 ? 0xFFFFFFFFu : ((1u << (1u << log_bits)) - 1u); }
    __device__ __forceinline__ u32 word_of(u32 id) const { return id >> (5 - log_bits); }
    __device__ __forceinline__ u32 shift_of(u32 id) const { return (id & ((1u << (5 - log_bits)) - 1u)) << log_bits; }
    // adds w, returns the old count (fields never carry: counts stay within the bound)
    __device__ __forceinline__ u32 add(u32 id, u32 w) const {
        u32 s = shift_of(id);
        return (atomicAdd(&words[word_of(id)], w << s) >> s) & mask();
    }
    __device__ __forceinline__ u32 get(u32 id) const {
        return (ld_volatile(&words[word_of(id)]) >> shift_of(id)) & mask();
    }
};

// ---- Gate: ZipperArray + AuditThreshold ---------------------------------------------------------

__device__ __forceinline__ bool gate_update(u32* za, u32* audit, u32 bound, u32 k, u32 old, u32 now) {
    u32 at = ld_volatile(audit);
    if (now < at) return false;
    for (u32 v = max(old + 1, at); v <= now; ++v) atomicAdd(&za[v], 1u);
    // No fence here. AT only ever moves past v after ZA[v] >= k was seen, and ZA never
    // over-counts, so the k-th count is at least AT - 1 whatever the interleaving; every object
    // whose final count reaches the final AT passed the Gate on its last update. A racing pair of
    // updaters may leave AT lower than Lemma 3.1's value: the select kernel then finds k or more
    // candidates and keeps the best k, which is still exact.
    while (true) {
        u32 a = ld_volatile(audit);
        if (a >= bound + 1 || ld_volatile(&za[a]) < k) break;
        atomicCAS(audit, a, a + 1);
    }
    return true;
}

// ---- Robin Hood hash table with expiry ----------------------------------------------------------
// An entry whose count is below AT is free: ties of count AT - 1 come from the bitmap counter, so
// the table need only keep what can end at or above the final AT (see cpq/robin_hood.rs).

// Raises the count of an existing copy of `id` on its probe path (up to the first EMPTY slot).
// 0: no copy found; 1: updated (or a copy already had this count or more).
__device__ __forceinline__ bool table_update(u64* tab, u32 mask, u32 id, u32 count) {
    u32 slot = hash_id(id) & mask;
    for (u32 probe = 0; probe <= mask; ++probe, slot = (slot + 1) & mask) {
        u64 e = ld_volatile64(&tab[slot]);
        if (e == EMPTY_ENTRY) return false;
        while ((u32)(e >> 32) == id) {
            if ((u32)e >= count) return true;
            const u64 seen = atomicCAS(&tab[slot], e, ((u64)id << 32) | count);
            if (seen == e) return true;
            e = seen;
        }
    }
    return false;
}

__device__ bool table_insert(u64* tab, u32 slots, u32 id, u32 count, const u32* audit) {
    const u32 mask = slots - 1;
    // look the key up first: concurrent inserts and expiry break the Robin Hood ordering that
    // would let a lookup stop early, and inserting without a lookup would multiply copies
    if (table_update(tab, mask, id, count)) return true;
    u64 cur = ((u64)id << 32) | count;
    u32 slot = hash_id(id) & mask;
    u32 age = 0;
    u64 steps = 0;
    while (true) {
        ++steps;
        if (age > mask || steps > 4ull * slots) return false;
        u64 e = ld_volatile64(&tab[slot]);
        u32 at = ld_volatile(audit);
        u32 eid = (u32)(e >> 32), ec = (u32)e;
        bool free_slot = (e == EMPTY_ENTRY) || (ec < at);
        if (free_slot || eid == (u32)(cur >> 32)) {
            if (!free_slot && ec >= (u32)cur) return true;
            if (atomicCAS(&tab[slot], e, cur) == e) return true;
            continue;
        }
        u32 e_age = (slot - (hash_id(eid) & mask)) & mask;
        if (e_age < age) {
            if (atomicCAS(&tab[slot], e, cur) != e) continue;
            if (ec < ld_volatile(audit)) return true;  // the evicted entry expired meanwhile
            cur = e;
            age = e_age;
        }
        slot = (slot + 1) & mask;
        ++age;
    }
}

// ---- the work list -------------------------------------------------------------------------------

struct Task {
    u64 start;
    u32 len, query, weight;
};

// Block-uniform: thread 0 finds task t's item by binary search, the block reads it from shared memory.
__device__ __forceinline__ Task load_task(const u32* items, const u32* task_start, u32 nitems, u32 sublist, u32 t) {
    __shared__ Task s_task;
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 lo = 0, hi = nitems;  // the last i with task_start[i] <= t
        while (hi - lo > 1) {
            const u32 mid = (lo + hi) >> 1;
            if (task_start[mid] <= t) lo = mid; else hi = mid;
        }
        const u32* it = items + 6 * (u64)lo;
        const u64 first = (u64)it[0] | ((u64)it[1] << 32);
        const u64 end = (u64)it[2] | ((u64)it[3] << 32);
        const u64 start = first + (u64)(t - task_start[lo]) * sublist;
        s_task.start = start;
        s_task.len = (u32)min((u64)sublist, end - start);
        s_task.query = it[4];
        s_task.weight = it[5];
    }
    __syncthreads();
    return s_task;
}

// ---- kernels: c-PQ ------------------------------------------------------------------------------

// The tiled count's candidates are a list, not a hash table: a tile's counts are final when it
// offers them, so an object is offered once, with its final count. The list is the query's table:
// slot 0 counts the entries, slots 1.. hold them. A tile offers the objects of count >= the AT it
// reads after its Gate, fewer than k (its own counts are in the ZipperArray by then, and AT stops
// only at a value fewer than k objects reach); where one block counts a query's tiles, fewer than k
// enter at each of the `bound` values of AT, within the table's factor x k x bound slots. Blocks
// counting other ranges of the same query's tiles at once may each add a tile's offers at the
// same AT before it rises: a full list flags the query, which is run again with a larger one, as
// a full hash table is.
__device__ __forceinline__ bool list_insert(u64* tab, u32 slots, u32 id, u32 count) {
    const u64 pos = atomicAdd(reinterpret_cast<unsigned long long*>(tab), 1ull) + 1;
    if (pos >= slots) return false;
    tab[pos] = ((u64)id << 32) | count;
    return true;
}

// `listed`: the batch counts by tiles, and each query's table is a list (list_insert): only its
// count is cleared.
extern "C" __global__ void cpq_init(u64* tables, u64 total_slots, u32* audit, u32 nq, const u32* __restrict__ meta,
                                    u32 listed) {
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 stride = (u64)gridDim.x * blockDim.x;
    if (listed == 0)
        for (u64 s = i; s < total_slots; s += stride) tables[s] = EMPTY_ENTRY;
    for (u64 q = i; q < nq; q += stride) {
        audit[q] = 1;
        if (listed != 0) tables[load_meta(meta, (u32)q).table_off] = 0;
    }
}

#define CPQ_MATCH_ARGS                                                                                 \
    POSTINGS_ARGS, const u32 *__restrict__ live, const u32 *__restrict__ items,                        \
        const u32 *__restrict__ task_start, u32 nitems, u32 ntasks, u32 sublist,                       \
        const u32 *__restrict__ meta, u32 *bitmaps, u32 *za, u32 *audit, u64 *tables, u32 *flags, u32 k
#define CPQ_MATCH_CALL \
    Postings{postings, packed_hdr, packed_data}, live, items, task_start, nitems, ntasks, sublist, meta, bitmaps, za, audit, tables, flags, k

template <bool PACKED>
__device__ __forceinline__ void cpq_match_body(const Postings P, const u32* __restrict__ live,
                                     const u32* __restrict__ items,
                                     const u32* __restrict__ task_start, u32 nitems, u32 ntasks, u32 sublist,
                                     const u32* __restrict__ meta, u32* bitmaps, u32* za, u32* audit, u64* tables,
                                     u32* flags, u32 k) {
    for (u32 t = blockIdx.x; t < ntasks; t += gridDim.x) {
        const Task task = load_task(items, task_start, nitems, sublist, t);
        const u64 start = task.start;
        const u32 len = task.len, q = task.query, w = task.weight;
        const QueryMeta m = load_meta(meta, q);
        const Bitmap bm = {bitmaps + m.bitmap_off, m.log_bits};
        u32* qza = za + m.za_off;
        u32* qat = audit + q;
        u64* tab = tables + m.table_off;
        // UNROLL postings per thread in flight: the counter adds return the old count, so each
        // is a round trip to L2; issuing several before using any hides that latency
        for (u32 i0 = threadIdx.x; i0 < len; i0 += UNROLL * blockDim.x) {
            u32 ids[UNROLL], olds[UNROLL];
#pragma unroll
            for (u32 j = 0; j < UNROLL; ++j) {
                const u32 i = i0 + j * blockDim.x;
                ids[j] = i < len ? P.at<PACKED>(start + i) : EMPTY_ID;
            }
            // a denied object's postings are not counted
            if (live != nullptr) {
#pragma unroll
                for (u32 j = 0; j < UNROLL; ++j)
                    if (ids[j] != EMPTY_ID && !is_live(live, ids[j])) ids[j] = EMPTY_ID;
            }
#pragma unroll
            for (u32 j = 0; j < UNROLL; ++j) olds[j] = ids[j] != EMPTY_ID ? bm.add(ids[j], w) : 0;
#pragma unroll
            for (u32 j = 0; j < UNROLL; ++j) {
                if (ids[j] != EMPTY_ID && gate_update(qza, qat, m.bound, k, olds[j], olds[j] + w)) {
                    if (!table_insert(tab, m.slots, ids[j], olds[j] + w, qat)) atomicOr(&flags[q], FLAG_TABLE_FULL);
                }
            }
        }
    }
}

// ---- selection, shared by the c-PQ and the count table --------------------------------------------

// Block-wide exclusive scan of one value per thread; blockDim.x is a multiple of 32, <= 1024.
__device__ u32 block_exclusive_scan(u32 v, u32* total, u32* warp_sums) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    u32 x = v;
    for (u32 d = 1; d < 32; d <<= 1) {
        u32 y = __shfl_up_sync(0xFFFFFFFFu, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31) warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        u32 s = lane < nwarps ? warp_sums[lane] : 0;
        for (u32 d = 1; d < 32; d <<= 1) {
            u32 y = __shfl_up_sync(0xFFFFFFFFu, s, d);
            if (lane >= d) s += y;
        }
        if (lane < nwarps) warp_sums[lane] = s;  // inclusive sums of warps
    }
    __syncthreads();
    const u32 warp_base = warp == 0 ? 0 : warp_sums[warp - 1];
    *total = warp_sums[nwarps - 1];
    __syncthreads();
    return warp_base + x - v;
}

__device__ __forceinline__ u64 hit_key(u32 count, u32 id) { return ((u64)(~count) << 32) | id; }

// Sorts keys[0..len) ascending (count desc, id asc); len is a power of two.
__device__ void block_bitonic_sort(u64* keys, u32 len) {
    for (u32 size = 2; size <= len; size <<= 1) {
        for (u32 stride = size >> 1; stride > 0; stride >>= 1) {
            for (u32 i = threadIdx.x; i < len; i += blockDim.x) {
                u32 j = i ^ stride;
                if (j > i) {
                    bool ascending = (i & size) == 0;
                    u64 a = keys[i], b = keys[j];
                    if ((a > b) == ascending) {
                        keys[i] = b;
                        keys[j] = a;
                    }
                }
            }
            __syncthreads();
        }
    }
}

// Counts per object, from a bitmap counter or from a count table. `equal(v, t)`: how many fields of
// unit value v equal t (>= 1); a field past the last object is zero, so it never counts.
struct BitmapCounts {
    Bitmap bm;
    u32 n;
    __device__ __forceinline__ u32 per_unit() const { return 1u << (5 - bm.log_bits); }
    __device__ __forceinline__ u64 units() const { return ((u64)n * (1u << bm.log_bits) + 31) / 32; }
    __device__ __forceinline__ const u32* unit_ptr() const { return bm.words; }
    __device__ __forceinline__ u32 field(u32 unit_value, u32 j) const { return (unit_value >> (j << bm.log_bits)) & bm.mask(); }
    __device__ __forceinline__ u32 equal(u32 v, u32 t) const {
        if (v == 0) return 0;
        if (bm.log_bits == 3) return __popc(__vcmpeq4(v, t * 0x01010101u)) >> 3;
        if (bm.log_bits == 4) return __popc(__vcmpeq2(v, t * 0x00010001u)) >> 4;
        u32 c = 0;
        for (u32 j = 0; j < per_unit(); ++j) c += field(v, j) == t;
        return c;
    }
};
struct TableCounts {
    const u32* counts;
    u32 n;
    __device__ __forceinline__ u32 per_unit() const { return 1; }
    __device__ __forceinline__ u64 units() const { return n; }
    __device__ __forceinline__ const u32* unit_ptr() const { return counts; }
    __device__ __forceinline__ u32 field(u32 unit_value, u32) const { return unit_value; }
    __device__ __forceinline__ u32 equal(u32 v, u32 t) const { return v == t; }
};

// Units a thread of ordered_fill reads a pass: consecutive, so a thread's ids come in order.
#define FILL_UNITS 8u

// Appends, in ascending id order, the ids whose count equals `target` (>= 1) to out[0..need);
// returns how many were written. Stops early once `need` are found. Each thread reads FILL_UNITS
// consecutive units a pass (all its loads in flight at once); a pass where no thread holds a match
// costs one barrier, and only a pass with matches pays for the block's scan of positions.
template <class C>
__device__ u32 ordered_fill(const C& src, u32 target, u32 need, u32 count_of_hit, u64* out, u32* warp_sums) {
    const u32 per = src.per_unit();
    const u64 units = src.units();
    const u32* __restrict__ w = src.unit_ptr();
    const u64 pass = (u64)FILL_UNITS * blockDim.x;
    u32 base = 0;
    for (u64 u0 = 0; u0 < units && base < need; u0 += pass) {
        const u64 first = u0 + (u64)FILL_UNITS * threadIdx.x;
        u32 v[FILL_UNITS];
#pragma unroll
        for (u32 j = 0; j < FILL_UNITS; ++j) v[j] = first + j < units ? __ldg(&w[first + j]) : 0u;
        u32 mine = 0;
#pragma unroll
        for (u32 j = 0; j < FILL_UNITS; ++j) mine += src.equal(v[j], target);
        if (__syncthreads_or(mine != 0) == 0) continue;
        u32 total;
        u32 p = base + block_exclusive_scan(mine, &total, warp_sums);
        for (u32 j = 0; j < FILL_UNITS && mine != 0; ++j) {
            if (src.equal(v[j], target) == 0) continue;
            for (u32 f = 0; f < per; ++f) {
                const u32 id = (u32)((first + j) * per + f);
                if (id < src.n && src.field(v[j], f) == target) {
                    if (p < need) out[p] = hit_key(count_of_hit, id);
                    ++p;
                }
            }
        }
        base += total;
    }
    return min(base, need);
}

// Sorts the `nc` candidates in keys[0..) and fills ties of count at - 1; writes the hit count.
template <class C>
__device__ void finish_query(const C& src, u32 at, u32 nc, u32 k, u32 kp, u64* keys, u32* out_count, u32* flags,
                             u32* warp_sums) {
    if (nc > kp) {
        if (threadIdx.x == 0) {
            atomicOr(flags, FLAG_CANDIDATES);
            *out_count = 0;
        }
        return;
    }
    u32 sp = 1;
    while (sp < nc) sp <<= 1;
    for (u32 i = nc + threadIdx.x; i < sp; i += blockDim.x) keys[i] = EMPTY_ENTRY;
    __syncthreads();
    block_bitonic_sort(keys, sp);
    u32 filled = 0;
    if (nc < k && at >= 2) {
        filled = ordered_fill(src, at - 1, k - nc, at - 1, keys + nc, warp_sums);
        if (filled < k - nc && threadIdx.x == 0) atomicOr(flags, FLAG_FILL_SHORT);
    }
    if (threadIdx.x == 0) *out_count = min(nc, k) + filled;
}

extern "C" __global__ void cpq_select(const u32* __restrict__ meta, u32* bitmaps, const u32* audit, const u64* tables,
                                      u32 listed, u32 nq, u32 n, u32 k, u32 kp, u64* keys, u32* out_count, u32* flags) {
    __shared__ u32 s_nc;
    __shared__ u32 warp_sums[32];
    for (u32 q = blockIdx.x; q < nq; q += gridDim.x) {
        const QueryMeta m = load_meta(meta, q);
        const BitmapCounts src = {{bitmaps + m.bitmap_off, m.log_bits}, n};
        const u64* tab = tables + m.table_off;
        u64* qkeys = keys + (u64)q * kp;
        const u32 at = audit[q];
        const u32 thr = max(at, 1u);
        const u32 mask = m.slots - 1;
        if (threadIdx.x == 0) s_nc = 0;
        __syncthreads();
        if (listed != 0) {
            // a list of final counts, each object once (list_insert)
            const u32 len = (u32)min(tab[0], (u64)m.slots - 1);
            for (u32 s = 1 + threadIdx.x; s <= len; s += blockDim.x) {
                const u64 e = tab[s];
                const u32 c = (u32)e;
                if (c < thr) continue;
                const u32 pos = atomicAdd(&s_nc, 1u);
                if (pos < kp) qkeys[pos] = hit_key(c, (u32)(e >> 32));
            }
        } else {
            for (u32 s = threadIdx.x; s < m.slots; s += blockDim.x) {
                const u64 e = tab[s];
                if (e == EMPTY_ENTRY) continue;
                const u32 id = (u32)(e >> 32);
                const u32 c = src.bm.get(id);
                if (c < thr) continue;
                // keep the copy nearest its home slot: duplicates lie on the same probe path
                bool dup = false;
                for (u32 p = hash_id(id) & mask; p != s; p = (p + 1) & mask) {
                    if ((u32)(tab[p] >> 32) == id) {
                        dup = true;
                        break;
                    }
                }
                if (dup) continue;
                const u32 pos = atomicAdd(&s_nc, 1u);
                if (pos < kp) qkeys[pos] = hit_key(c, id);
            }
        }
        __syncthreads();
        const u32 nc = s_nc;
        finish_query(src, at, nc, k, kp, qkeys, out_count + q, flags + q, warp_sums);
        __syncthreads();
    }
}

extern "C" __global__ void cpq_match(CPQ_MATCH_ARGS) { cpq_match_body<false>(CPQ_MATCH_CALL); }
extern "C" __global__ void cpq_match_packed(CPQ_MATCH_ARGS) { cpq_match_body<true>(CPQ_MATCH_CALL); }

// ---- kernels: count-table baseline ----------------------------------------------------------------

template <bool PACKED>
__device__ __forceinline__ void ct_match_body(const Postings P, const u32* __restrict__ live,
                                    const u32* __restrict__ items, const u32* __restrict__ task_start, u32 nitems,
                                    u32 ntasks, u32 sublist, u32* counts, u32 n) {
    for (u32 t = blockIdx.x; t < ntasks; t += gridDim.x) {
        const Task task = load_task(items, task_start, nitems, sublist, t);
        u32* qc = counts + (u64)task.query * n;
        for (u32 i = threadIdx.x; i < task.len; i += blockDim.x) {
            const u32 id = P.at<PACKED>(task.start + i);
            if (is_live(live, id)) atomicAdd(&qc[id], task.weight);
        }
    }
}

#define CT_MATCH_ARGS                                                                                  \
    POSTINGS_ARGS, const u32 *__restrict__ live, const u32 *__restrict__ items,                        \
        const u32 *__restrict__ task_start, u32 nitems, u32 ntasks, u32 sublist, u32 *counts, u32 n
#define CT_MATCH_CALL Postings{postings, packed_hdr, packed_data}, live, items, task_start, nitems, ntasks, sublist, counts, n
extern "C" __global__ void ct_match(CT_MATCH_ARGS) { ct_match_body<false>(CT_MATCH_CALL); }
extern "C" __global__ void ct_match_packed(CT_MATCH_ARGS) { ct_match_body<true>(CT_MATCH_CALL); }

// hist: per query bound + 2 counters (zeroed), in global memory.
extern "C" __global__ void ct_select(const u32* __restrict__ meta, const u32* counts, u32* hist, u32 nq, u32 n, u32 k,
                                     u32 kp, u64* keys, u32* out_count, u32* flags) {
    __shared__ u32 s_nc;
    __shared__ u32 s_at;
    __shared__ u32 warp_sums[32];
    for (u32 q = blockIdx.x; q < nq; q += gridDim.x) {
        const QueryMeta m = load_meta(meta, q);
        const TableCounts src = {counts + (u64)q * n, n};
        u32* h = hist + m.za_off;
        u64* qkeys = keys + (u64)q * kp;
        for (u32 id = threadIdx.x; id < n; id += blockDim.x) {
            const u32 c = src.counts[id];
            if (c != 0) atomicAdd(&h[min(c, m.bound + 1)], 1u);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            // AT: the least v >= 1 with fewer than k objects of count >= v
            u32 at = 1, above = 0;
            for (u32 v = m.bound + 1; v >= 1; --v) {
                above += h[v];
                if (above >= k) {
                    at = v + 1;
                    break;
                }
            }
            s_at = at;
            s_nc = 0;
        }
        __syncthreads();
        const u32 at = s_at;
        for (u32 id = threadIdx.x; id < n; id += blockDim.x) {
            const u32 c = src.counts[id];
            if (c != 0 && c >= at) {
                const u32 pos = atomicAdd(&s_nc, 1u);
                if (pos < kp) qkeys[pos] = hit_key(c, id);
            }
        }
        __syncthreads();
        finish_query(src, at, s_nc, k, kp, qkeys, out_count + q, flags + q, warp_sums);
        __syncthreads();
    }
}


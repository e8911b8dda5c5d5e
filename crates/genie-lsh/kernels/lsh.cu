// LSH hashing on the GPU (paper section IV; issue 5): one thread per (vector, function) pair computes
// function i's signature of the vector with the CPU's exact arithmetic, re-hashes it with
// MurmurHash3 x86_32 (seed_i) into [0, D) and writes keyword i * D + bucket. Signatures are
// identical to crates/genie-lsh/src/hash/ bit for bit:
//   project_hash (projection.rs, E2LSH and L1): floor((a . v + b) / w) as i64, 8 little-endian bytes;
//   sign_hash    (sign.rs, SRP): bit j set when a_ij . v >= 0, the u64 as 8 little-endian bytes;
//   binning_hash (binning.rs, RBH): per dimension the cell floor((x - u) * (1 / g)) as i32, written as
//                zigzag LEB128 varints, the whole byte string hashed.
// Every floating-point operation is an explicitly rounded intrinsic (round to nearest, never fused
// into a multiply-add), in the CPU's order.

__device__ __forceinline__ u32 rotl32(u32 x, int r) { return (x << r) | (x >> (32 - r)); }

// MurmurHash3 x86_32: the mix of one 4-byte block (or of the zero-padded tail, without the
// h-update) into the state.
__device__ __forceinline__ u32 murmur3_k(u32 k) {
    k *= 0xcc9e2d51u;
    k = rotl32(k, 15);
    k *= 0x1b873593u;
    return k;
}

__device__ __forceinline__ u32 murmur3_block(u32 h, u32 k) {
    h ^= murmur3_k(k);
    h = rotl32(h, 13);
    return h * 5u + 0xe6546b64u;
}

// MurmurHash3 x86_32 of 8 bytes (two 4-byte blocks, no tail).
__device__ __forceinline__ u32 murmur3_8(u64 v, u32 seed) {
    u32 h = murmur3_block(seed, (u32)v);
    h = murmur3_block(h, (u32)(v >> 32));
    h ^= 8u;
    return fmix32(h);
}

// MurmurHash3 x86_32 of a byte stream fed one byte at a time: full 4-byte blocks (little-endian)
// are mixed as they complete, the 1 to 3 bytes left at the end are the tail.
struct Murmur3Stream {
    u32 h;
    u32 block;  // bytes of the incomplete block, little-endian
    u32 filled; // bytes in `block`, 0 to 3
    u32 len;    // bytes so far (the CPU's length is a u32 too)

    __device__ __forceinline__ explicit Murmur3Stream(u32 seed) : h(seed), block(0u), filled(0u), len(0u) {}

    __device__ __forceinline__ void push(u32 byte) {
        block |= (byte & 0xffu) << (8u * filled);
        ++filled;
        ++len;
        if (filled == 4u) {
            h = murmur3_block(h, block);
            block = 0u;
            filled = 0u;
        }
    }

    __device__ __forceinline__ u32 finish() const {
        u32 r = h;
        if (filled > 0u) r ^= murmur3_k(block);
        r ^= len;
        return fmix32(r);
    }
};

// The dot product a . v as crates/genie-lsh/src/metric.rs `lanes` computes it: products summed in 8
// float lanes over the full chunks of 8, the remainder summed in one float starting at -0.0, then
// the lanes in order and the remainder added in double starting at -0.0 (Rust's float `sum`).
__device__ __forceinline__ double dot_lanes(const float* __restrict__ a, const float* __restrict__ v, u32 dim) {
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    const u32 full = dim / 8u * 8u;
    for (u32 j = 0; j < full; j += 8u) {
#pragma unroll
        for (u32 l = 0; l < 8u; ++l) acc[l] = __fadd_rn(acc[l], __fmul_rn(a[j + l], v[j + l]));
    }
    float tail = -0.0f;
    for (u32 j = full; j < dim; ++j) tail = __fadd_rn(tail, __fmul_rn(a[j], v[j]));
    double s = -0.0;
#pragma unroll
    for (u32 l = 0; l < 8u; ++l) s = __dadd_rn(s, (double)acc[l]);
    return __dadd_rn(s, (double)tail);
}

// Rust's `x as i64`: truncation toward zero, saturating at the bounds, NaN to 0 (spelled out: an
// out-of-range conversion is undefined in C++).
__device__ __forceinline__ i64 f64_as_i64(double x) {
    if (x != x) return 0;
    if (x >= 9223372036854775808.0) return 9223372036854775807ll;
    if (x <= -9223372036854775808.0) return -9223372036854775807ll - 1;
    return (i64)x;
}

// crates/genie-lsh/src/hash/binning.rs `floor_i32`: t = y as i32 (truncating, saturating, NaN to
// 0), then t - 1 (saturating) when t > y.
__device__ __forceinline__ int floor_i32(double y) {
    int t;
    if (y != y) t = 0;
    else if (y >= 2147483647.0) t = 2147483647;
    else if (y <= -2147483648.0) t = -2147483647 - 1;
    else t = (int)y;
    if ((double)t > y && t != -2147483647 - 1) t -= 1;
    return t;
}

extern "C" __global__ void project_hash(const float* __restrict__ vecs, u32 n, u32 dim, const float* __restrict__ a,
                                        const double* __restrict__ offsets, double width,
                                        const u32* __restrict__ seeds, u32 m, u32 buckets, u32* keywords) {
    const u64 total = (u64)n * m;
    for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (u64)gridDim.x * blockDim.x) {
        const u32 vi = (u32)(t / m), fi = (u32)(t % m);
        const double s = dot_lanes(a + (u64)fi * dim, vecs + (u64)vi * dim, dim);
        const double x = floor(__ddiv_rn(__dadd_rn(s, offsets[fi]), width));
        const i64 sig = f64_as_i64(x);
        keywords[t] = fi * buckets + murmur3_8((u64)sig, seeds[fi]) % buckets;
    }
}

// a: m x bits x dim hyperplane normals, row-major (function, then bit).
extern "C" __global__ void sign_hash(const float* __restrict__ vecs, u32 n, u32 dim, const float* __restrict__ a,
                                     u32 bits, const u32* __restrict__ seeds, u32 m, u32 buckets, u32* keywords) {
    const u64 total = (u64)n * m;
    for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (u64)gridDim.x * blockDim.x) {
        const u32 vi = (u32)(t / m), fi = (u32)(t % m);
        const float* v = vecs + (u64)vi * dim;
        u64 sig = 0;
        for (u32 j = 0; j < bits; ++j) {
            const float* row = a + ((u64)fi * bits + j) * dim;
            if (dot_lanes(row, v, dim) >= 0.0) sig |= 1ull << j;
        }
        keywords[t] = fi * buckets + murmur3_8(sig, seeds[fi]) % buckets;
    }
}

// inv_width, shift: m x dim, row-major (the reciprocal grid widths 1 / g and the shifts u).
extern "C" __global__ void binning_hash(const float* __restrict__ vecs, u32 n, u32 dim,
                                        const double* __restrict__ inv_width, const double* __restrict__ shift,
                                        const u32* __restrict__ seeds, u32 m, u32 buckets, u32* keywords) {
    const u64 total = (u64)n * m;
    for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (u64)gridDim.x * blockDim.x) {
        const u32 vi = (u32)(t / m), fi = (u32)(t % m);
        const float* v = vecs + (u64)vi * dim;
        const double* iw = inv_width + (u64)fi * dim;
        const double* u = shift + (u64)fi * dim;
        Murmur3Stream hash(seeds[fi]);
        for (u32 j = 0; j < dim; ++j) {
            const int c = floor_i32(__dmul_rn(__dsub_rn((double)v[j], u[j]), iw[j]));
            // zigzag: (c << 1) ^ (c >> 31), in unsigned arithmetic
            u32 z = ((u32)c << 1) ^ (c < 0 ? 0xffffffffu : 0u);
            while (z >= 0x80u) {
                hash.push((z & 0x7fu) | 0x80u);
                z >>= 7;
            }
            hash.push(z);
        }
        keywords[t] = fi * buckets + hash.finish() % buckets;
    }
}

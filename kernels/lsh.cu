// LSH hashing on the GPU (paper section IV; issue 5): for projection families (E2LSH with Gaussian
// a, its L1 variant with Cauchy a) every (vector, function) pair computes
//   h = floor((a . v + b) / w),  keyword = i * D + MurmurHash3_x86_32(h as 8 little-endian bytes,
//   seed_i) % D
// with the CPU's exact arithmetic: the dot product is summed in 8 float lanes (round-to-nearest
// products and sums, never fused), the lanes and the tail in double, so signatures are identical to
// crates/genie-lsh/src/hash/projection.rs bit for bit.

__device__ __forceinline__ u32 rotl32(u32 x, int r) { return (x << r) | (x >> (32 - r)); }

// MurmurHash3 x86_32 of 8 bytes (two 4-byte blocks, no tail).
__device__ __forceinline__ u32 murmur3_8(u64 v, u32 seed) {
    const u32 c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    u32 h = seed;
#pragma unroll
    for (int b = 0; b < 2; ++b) {
        u32 k = (u32)(v >> (32 * b));
        k *= c1;
        k = rotl32(k, 15);
        k *= c2;
        h ^= k;
        h = rotl32(h, 13);
        h = h * 5u + 0xe6546b64u;
    }
    h ^= 8u;
    return fmix32(h);
}

extern "C" __global__ void project_hash(const float* __restrict__ vecs, u32 n, u32 dim, const float* __restrict__ a,
                                        const double* __restrict__ offsets, double width,
                                        const u32* __restrict__ seeds, u32 m, u32 buckets, u32* keywords) {
    const u64 total = (u64)n * m;
    for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (u64)gridDim.x * blockDim.x) {
        const u32 vi = (u32)(t / m), fi = (u32)(t % m);
        const float* v = vecs + (u64)vi * dim;
        const float* w = a + (u64)fi * dim;
        float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
        const u32 full = dim / 8 * 8;
        for (u32 j = 0; j < full; j += 8) {
#pragma unroll
            for (u32 l = 0; l < 8; ++l) acc[l] = __fadd_rn(acc[l], __fmul_rn(w[j + l], v[j + l]));
        }
        float tail = -0.0f;
        for (u32 j = full; j < dim; ++j) tail = __fadd_rn(tail, __fmul_rn(w[j], v[j]));
        double s = -0.0;
#pragma unroll
        for (u32 l = 0; l < 8; ++l) s = __dadd_rn(s, (double)acc[l]);
        s = __dadd_rn(s, (double)tail);
        const double x = floor(__ddiv_rn(__dadd_rn(s, offsets[fi]), width));
        // Rust's `as i64` saturates; the values here are far inside the range
        const i64 sig = (i64)x;
        keywords[t] = fi * buckets + murmur3_8((u64)sig, seeds[fi]) % buckets;
    }
}

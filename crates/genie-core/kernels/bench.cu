// Microbenchmarks of the hardware ceilings the match kernels are held against (docs/BENCHMARKS.md):
// random 32-bit atomic adds into a table larger than L2, and random byte increments into a tile of
// shared memory. (Copy bandwidth uses the driver's copy.)

__device__ __forceinline__ u32 mix(u32 h) { return fmix32(h); }

extern "C" __global__ void random_atomic_add(u32* table, u32 mask, u32 ops_per_thread, u32 seed) {
    u32 x = mix((blockIdx.x * blockDim.x + threadIdx.x) ^ seed);
    for (u32 i = 0; i < ops_per_thread; ++i) {
        x = x * 1664525u + 1013904223u;
        atomicAdd(&table[mix(x) & mask], 1u);
    }
}

// Random byte-counter increments into a 32 KB tile of shared memory, the per-posting work of the
// tiled count (kernels/cpq.cu) without its lists: each thread adds 1 to the 8-bit field of a
// random object of its block's tile (4 fields a 32-bit word). The fields wrap; only the rate counts.
extern "C" __global__ void __launch_bounds__(512) shared_tile_add(u32* out, u32 ops_per_thread, u32 seed) {
    __shared__ u32 tile[8192];
    for (u32 i = threadIdx.x; i < 8192u; i += blockDim.x) tile[i] = 0;
    __syncthreads();
    u32 x = mix((blockIdx.x * blockDim.x + threadIdx.x) ^ seed);
    for (u32 i = 0; i < ops_per_thread; ++i) {
        x = x * 1664525u + 1013904223u;
        const u32 o = mix(x) & 32767u;
        atomicAdd(&tile[o >> 2], 1u << ((o & 3u) * 8u));
    }
    __syncthreads();
    u32 s = 0;
    for (u32 i = threadIdx.x; i < 8192u; i += blockDim.x) s ^= tile[i];
    if (s == 0x9E3779B9u) out[blockIdx.x] = s;  // never in practice; keeps the tile's adds
}

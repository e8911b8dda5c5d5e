// Microbenchmarks of the hardware ceilings the match kernels are held against (docs/BENCHMARKS.md):
// random 32-bit atomic adds into a table larger than L2. (Copy bandwidth uses the driver's copy.)

__device__ __forceinline__ u32 mix(u32 h) { return fmix32(h); }

extern "C" __global__ void random_atomic_add(u32* table, u32 mask, u32 ops_per_thread, u32 seed) {
    u32 x = mix((blockIdx.x * blockDim.x + threadIdx.x) ^ seed);
    for (u32 i = 0; i < ops_per_thread; ++i) {
        x = x * 1664525u + 1013904223u;
        atomicAdd(&table[mix(x) & mask], 1u);
    }
}

// Prepended to every kernel source (crates/genie-core/src/backend/cuda/kernels.rs): the integer
// types and MurmurHash3's 32-bit finalizer, which the CPU code uses too.

typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

__device__ __forceinline__ u32 fmix32(u32 h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

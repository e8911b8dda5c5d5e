//! Re-hashing of LSH signatures (paper section IV-A2, Fig. 7): a signature of any length is mapped
//! into `[0, D)` by MurmurHash3 (x86, 32-bit) with a per-function seed, `r_i(h_i(p))`. Function `i`
//! owns the keywords `[i * D, (i + 1) * D)`.

use genie_core::Keyword;

/// MurmurHash3 x86_32 of `bytes` with `seed`.
pub fn murmur3_32(bytes: &[u8], seed: u32) -> u32 {
    let mut source = bytes;
    match murmur3::murmur3_32(&mut source, seed) {
        Ok(h) => h,
        // reading from a byte slice never fails; keep a defined value rather than a panic path
        Err(_) => seed,
    }
}

/// The bucket in `[0, buckets)` of a signature under function `seed`.
#[inline]
pub fn bucket(signature: &[u8], seed: u32, buckets: u32) -> u32 {
    murmur3_32(signature, seed) % buckets.max(1)
}

/// The keyword of function `function` with bucket `bucket`: `function * buckets + bucket`.
#[inline]
pub fn keyword(function: u32, buckets: u32, bucket: u32) -> Keyword {
    function * buckets + bucket
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Published MurmurHash3 x86_32 test vectors (SMHasher's reference implementation).
    #[test]
    fn golden_vectors() {
        let cases: &[(&[u8], u32, u32)] = &[
            (b"", 0, 0),
            (b"", 1, 0x514E_28B7),
            (b"", 0xffff_ffff, 0x81F1_6F39),
            (&[0xff, 0xff, 0xff, 0xff], 0, 0x7629_3B50),
            (&[0x21, 0x43, 0x65, 0x87], 0, 0xF55B_516B),
            (&[0x21, 0x43, 0x65, 0x87], 0x5082_EDEE, 0x2362_F9DE),
            (&[0x21, 0x43, 0x65], 0, 0x7E4A_8634),
            (&[0x21, 0x43], 0, 0xA0F7_B07A),
            (&[0x21], 0, 0x7266_1CF4),
            (&[0, 0, 0, 0], 0, 0x2362_F9DE),
            (&[0, 0, 0], 0, 0x85F0_B427),
            (&[0, 0], 0, 0x30F4_C306),
            (&[0], 0, 0x514E_28B7),
            (b"aaaa", 0x9747_b28c, 0x5A97_808A),
            (b"aaa", 0x9747_b28c, 0x283E_0130),
            (b"aa", 0x9747_b28c, 0x5D21_1726),
            (b"a", 0x9747_b28c, 0x7FA0_9EA6),
            (b"abcd", 0x9747_b28c, 0xF047_8627),
            (b"abc", 0x9747_b28c, 0xC84A_62DD),
            (b"ab", 0x9747_b28c, 0x7487_5592),
            (b"Hello, world!", 0x9747_b28c, 0x2488_4CBA),
            (
                b"The quick brown fox jumps over the lazy dog",
                0x9747_b28c,
                0x2FA8_26CD,
            ),
        ];
        for &(bytes, seed, want) in cases {
            assert_eq!(murmur3_32(bytes, seed), want, "{bytes:?} seed {seed:#x}");
        }
    }

    #[test]
    fn buckets_and_keywords() {
        for s in 0..100u32 {
            assert!(bucket(&s.to_le_bytes(), 7, 13) < 13);
        }
        assert_eq!(bucket(b"x", 1, 0), 0);
        assert_eq!(keyword(3, 100, 7), 307);
    }
}

//! Buffers backed by 2 MiB pages where the system gives them (Linux's transparent huge pages,
//! asked for with `madvise`): a scatter over gigabytes otherwise misses the TLB on most writes.
//! (Counters of the CPU's tiles in a huge page were measured too, on a 16-core Xeon, and gave
//! nothing: a tile's 256 KiB are few 4 KiB pages.)

use std::mem::MaybeUninit;

/// A huge page's bytes.
pub const HUGE_PAGE: usize = 2 << 20;

/// Asks for huge pages behind the whole 2 MiB pages of `buf`, which must not be touched yet (the
/// advice takes effect when a page is first written). Elsewhere than Linux, nothing.
pub fn advise_huge_pages<T>(buf: &mut [MaybeUninit<T>]) {
    #[cfg(target_os = "linux")]
    {
        let (start, len) = (buf.as_mut_ptr() as usize, std::mem::size_of_val(buf));
        let first = start.next_multiple_of(HUGE_PAGE);
        let end = (start + len) / HUGE_PAGE * HUGE_PAGE;
        if end > first {
            // SAFETY: advice on whole pages inside a live allocation of ours; it changes how
            // they are backed, never their contents. A refusal (no such support) is harmless.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advised_memory_keeps_what_is_written() {
        let mut v = Vec::<u32>::with_capacity(3 * HUGE_PAGE / 4);
        advise_huge_pages(v.spare_capacity_mut());
        v.extend((0..v.capacity() as u32).map(|i| i ^ 0x5a5a));
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32 ^ 0x5a5a));
        // too small for a whole huge page: no advice, no harm
        let mut small = Vec::<u8>::with_capacity(100);
        advise_huge_pages(small.spare_capacity_mut());
        small.resize(100, 7);
        assert_eq!(small.iter().map(|&x| u32::from(x)).sum::<u32>(), 700);
    }
}

//! The kernel arguments that several launches of kernels/cpq.cu share, pushed in one place.

use super::postings::DevicePostings;
use cudarc::driver::{CudaSlice, CudaView, LaunchArgs, PushKernelArg};

/// The `live` argument of a search without a mask: a null pointer, every object may be returned.
static ALL_LIVE: u64 = 0;

/// A null pointer argument (the arrays of the form of the postings not in use).
static NULL: u64 = 0;

/// Pushes `(postings, packed_hdr, packed_data, live)`, the arguments every match kernel starts
/// with: the List Array, plain (the headers and bits null) or packed (the ids null), and the
/// search's object mask on the device (`None`: a null pointer, no mask).
pub(super) fn push_postings<'a>(
    args: &mut LaunchArgs<'a>,
    postings: &'a DevicePostings,
    live: Option<&'a CudaSlice<u32>>,
) {
    push_list_array(args, postings);
    match live {
        Some(words) => args.arg(words),
        None => args.arg(&ALL_LIVE),
    };
}

/// Pushes `(postings, packed_hdr, packed_data)`: the List Array, plain (the headers and bits null)
/// or packed (the ids null).
pub(super) fn push_list_array<'a>(args: &mut LaunchArgs<'a>, postings: &'a DevicePostings) {
    match postings {
        DevicePostings::Plain(ids) => args.arg(ids).arg(&NULL).arg(&NULL),
        DevicePostings::Packed { headers, data } => args.arg(&NULL).arg(headers).arg(data),
    };
}

/// The arguments `cpq_match` and `ct_match` start with: the postings and the mask, the batch's
/// items and task prefix sums, their numbers and the sublist length.
pub(super) struct MatchWork<'a> {
    pub(super) postings: &'a DevicePostings,
    pub(super) live: Option<&'a CudaSlice<u32>>,
    pub(super) items: &'a CudaView<'a, u32>,
    pub(super) task_start: &'a CudaView<'a, u32>,
    pub(super) nitems: &'a u32,
    pub(super) ntasks: &'a u32,
    pub(super) sublist: &'a u32,
}

impl<'a> MatchWork<'a> {
    /// Pushes `(postings, live, items, task_start, nitems, ntasks, sublist)`.
    pub(super) fn push(&self, args: &mut LaunchArgs<'a>) {
        push_postings(args, self.postings, self.live);
        args.arg(self.items)
            .arg(self.task_start)
            .arg(self.nitems)
            .arg(self.ntasks)
            .arg(self.sublist);
    }
}

/// Pushes the arguments `cpq_select` and `ct_select` end with: `sizes` (`nq`, `n`, `k`, `kp`),
/// then the top-k keys, the counts and the flags they write.
pub(super) fn push_select_tail<'a>(
    args: &mut LaunchArgs<'a>,
    sizes: &'a [u32; 4],
    keys: &'a mut CudaSlice<u64>,
    counts: &'a mut CudaSlice<u32>,
    flags: &'a mut CudaSlice<u32>,
) {
    let [nq, n, k, kp] = sizes;
    args.arg(nq)
        .arg(n)
        .arg(k)
        .arg(kp)
        .arg(keys)
        .arg(counts)
        .arg(flags);
}

/// Pushes the arguments the CPQ match kernels (`cpq_match`, `tile_match*`) share after the
/// batch's work: the query metadata, the bitmaps, ZipperArrays and audit counts (`counts`, in
/// that order), the tables, the flags and `k`.
pub(super) fn push_cpq_counting<'a>(
    args: &mut LaunchArgs<'a>,
    meta: &'a CudaView<'a, u32>,
    counts: [&'a mut CudaSlice<u32>; 3],
    tables: &'a mut CudaSlice<u64>,
    flags: &'a mut CudaSlice<u32>,
    k: &'a u32,
) {
    let [bitmaps, zipper, audit] = counts;
    args.arg(meta)
        .arg(bitmaps)
        .arg(zipper)
        .arg(audit)
        .arg(tables)
        .arg(flags)
        .arg(k);
}

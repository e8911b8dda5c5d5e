//! The c-PQ hash table (paper section III-C.2): open addressing with Robin Hood probing by age,
//! lock-free (64-bit compare-and-swap on packed `(id, count)` entries), and an expiry rule one step
//! stronger than the paper's: an entry whose count is below `AT` counts as free. The paper keeps
//! entries of count `AT - 1` because it takes ties from the table; extraction here takes ties of
//! count `AT - 1` from the bitmap counter (deterministic order), so the table only has to keep
//! entries that can end at or above the final AT, and an object that does re-enters on its last
//! update.
//!
//! A key may end up stored twice (after an expired slot earlier in its chain is reused); extraction
//! reads exact counts from the bitmap counter and removes duplicates, so this costs only space.
//! An entry whose count is at least the final `AT` is never overwritten; when no slot is left the
//! insert reports [`TableFull`] and the query is rerun with a larger table.

use std::sync::atomic::{AtomicU64, Ordering};

/// The table ran out of slots: rerun the query with a larger table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableFull;

/// Marks a free slot (id `u32::MAX` is never an object id).
pub const EMPTY: u64 = u64::MAX;
const EMPTY_ID: u32 = u32::MAX;

fn pack(id: u32, count: u32) -> u64 {
    (u64::from(id) << 32) | u64::from(count)
}
fn id_of(e: u64) -> u32 {
    (e >> 32) as u32
}
fn count_of(e: u64) -> u32 {
    e as u32
}

/// The multiplicative hash of a key: MurmurHash3's 32-bit finalizer (same on CPU and GPU).
pub fn hash_id(id: u32) -> u32 {
    let mut h = id;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Slots for a query: `factor * k * bound`, a power of two >= 16, and at most twice the objects
/// at the default factor of 1.5 (a larger factor, as in a rerun, raises that cap with it).
pub fn table_slots(k: u32, bound: u32, n: u32, factor: f64) -> usize {
    let want = (factor * f64::from(k) * f64::from(bound)).ceil() as u64;
    let cap = (2.0 * f64::from(n.max(8)) * (factor / 1.5).max(1.0)).ceil() as u64;
    (want.min(cap).max(16) as usize).next_power_of_two()
}

/// The hash table of one query.
#[derive(Debug)]
pub struct RobinHoodTable {
    slots: Vec<AtomicU64>,
}

impl RobinHoodTable {
    /// An empty table of `slots` entries (a power of two).
    pub fn new(slots: usize) -> Self {
        debug_assert!(slots.is_power_of_two());
        Self {
            slots: (0..slots).map(|_| AtomicU64::new(EMPTY)).collect(),
        }
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Inserts or raises `(id, count)`; `audit` reads the current AuditThreshold for the expiry rule.
    pub fn insert(&self, id: u32, count: u32, audit: impl Fn() -> u32) -> Result<(), TableFull> {
        // look the key up first: concurrent inserts and expiry break the Robin Hood ordering that
        // would let a lookup stop early, and inserting without a lookup would multiply copies
        if self.update(id, count) {
            return Ok(());
        }
        let mask = self.slots.len() - 1;
        let home = |key: u32| hash_id(key) as usize & mask;
        let mut cur = pack(id, count);
        let mut slot = home(id);
        let mut age = 0usize;
        // a bound on all probes, displacements included, so a full table cannot loop forever
        let mut steps = 0usize;
        loop {
            steps += 1;
            if age > mask || steps > 4 * self.slots.len() {
                return Err(TableFull);
            }
            let e = self.slots[slot].load(Ordering::SeqCst);
            let at = audit();
            let free = e == EMPTY || count_of(e) < at;
            if free || id_of(e) == id_of(cur) {
                if !free && count_of(e) >= count_of(cur) {
                    return Ok(());
                }
                if self.cas(slot, e, cur) {
                    return Ok(());
                }
                continue;
            }
            let e_age = slot.wrapping_sub(home(id_of(e))) & mask;
            if e_age < age {
                if !self.cas(slot, e, cur) {
                    continue;
                }
                // carry the evicted entry on, unless it expired meanwhile
                if count_of(e) < audit() {
                    return Ok(());
                }
                cur = e;
                age = e_age;
            }
            slot = (slot + 1) & mask;
            age += 1;
        }
    }

    /// Raises an existing copy of `id` found on its probe path before the first empty slot.
    fn update(&self, id: u32, count: u32) -> bool {
        let mask = self.slots.len() - 1;
        let mut slot = hash_id(id) as usize & mask;
        for _ in 0..=mask {
            let mut e = self.slots[slot].load(Ordering::SeqCst);
            if e == EMPTY {
                return false;
            }
            while id_of(e) == id {
                if count_of(e) >= count {
                    return true;
                }
                match self.slots[slot].compare_exchange(
                    e,
                    pack(id, count),
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                ) {
                    Ok(_) => return true,
                    Err(seen) => e = seen,
                }
            }
            slot = (slot + 1) & mask;
        }
        false
    }

    fn cas(&self, slot: usize, old: u64, new: u64) -> bool {
        self.slots[slot]
            .compare_exchange(old, new, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// The ids stored (possibly with duplicates), in slot order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .map(|s| id_of(s.load(Ordering::SeqCst)))
            .filter(|&id| id != EMPTY_ID)
    }

    /// The stored `(id, count)` of `id`, if present (a test helper; counts may be stale).
    pub fn get(&self, id: u32) -> Option<u32> {
        self.slots
            .iter()
            .map(|s| s.load(Ordering::SeqCst))
            .filter(|&e| e != EMPTY && id_of(e) == id)
            .map(count_of)
            .max()
    }
}

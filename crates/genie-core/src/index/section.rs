//! An array of the index held in memory or used in place in a memory-mapped index file
//! ([`super::persist`]): the List Array and the Position Map of a mapped file are never copied.

use memmap2::Mmap;
use std::ops::Deref;
use std::sync::Arc;

/// Plain little-endian numbers an index array is made of.
pub trait Word: bytemuck::Pod + PartialEq + Send + Sync {}
impl Word for u32 {}
impl Word for u64 {}

/// An index array: its own vector, or words of a mapped file.
pub struct Section<T: Word> {
    store: Store<T>,
}

enum Store<T> {
    Owned(Vec<T>),
    Mapped {
        map: Arc<Mmap>,
        start: usize,
        bytes: usize,
    },
}

impl<T: Word> Section<T> {
    /// The words of `map[start..start + bytes]`; `None` unless the range lies in the map, holds
    /// whole words and is aligned for them (the format aligns every array to a page).
    pub(crate) fn mapped(map: &Arc<Mmap>, start: usize, bytes: usize) -> Option<Self> {
        let end = start.checked_add(bytes)?;
        let slice = map.get(start..end)?;
        bytemuck::try_cast_slice::<u8, T>(slice).ok()?;
        if cfg!(target_endian = "big") {
            return None;
        }
        Some(Self {
            store: Store::Mapped {
                map: Arc::clone(map),
                start,
                bytes,
            },
        })
    }

    /// Whether the words lie in a mapped file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.store, Store::Mapped { .. })
    }
}

impl<T: Word> From<Vec<T>> for Section<T> {
    fn from(v: Vec<T>) -> Self {
        Self {
            store: Store::Owned(v),
        }
    }
}

impl<T: Word> Deref for Section<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.store {
            Store::Owned(v) => v,
            // alignment and length were checked when the section was made
            Store::Mapped { map, start, bytes } => {
                bytemuck::cast_slice(&map[*start..*start + *bytes])
            }
        }
    }
}

impl<T: Word> Clone for Section<T> {
    fn clone(&self) -> Self {
        let store = match &self.store {
            Store::Owned(v) => Store::Owned(v.clone()),
            Store::Mapped { map, start, bytes } => Store::Mapped {
                map: Arc::clone(map),
                start: *start,
                bytes: *bytes,
            },
        };
        Self { store }
    }
}

impl<T: Word> PartialEq for Section<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Word> Eq for Section<T> {}

impl<T: Word + std::fmt::Debug> std::fmt::Debug for Section<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = if self.is_mapped() { "mapped" } else { "owned" };
        write!(f, "Section({how}, {} words)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_and_mapped_views() {
        let owned: Section<u32> = vec![1u32, 2, 3].into();
        assert_eq!(&*owned, &[1, 2, 3]);
        assert!(!owned.is_mapped());
        let dir = tempfile::tempdir().expect("test setup");
        let path = dir.path().join("w");
        let words: Vec<u8> = [7u32, 8, 9, 10]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        std::fs::write(&path, &words).expect("test setup");
        let file = std::fs::File::open(&path).expect("test setup");
        // SAFETY: the test's own file, not changed while mapped
        let map = Arc::new(unsafe { Mmap::map(&file) }.expect("test setup"));
        let s = Section::<u32>::mapped(&map, 4, 8).expect("test setup");
        assert_eq!(&*s, &[8, 9]);
        assert!(s.is_mapped());
        assert_eq!(s.clone(), Section::from(vec![8u32, 9]));
        assert!(Section::<u32>::mapped(&map, 2, 4).is_none(), "misaligned");
        assert!(
            Section::<u32>::mapped(&map, 4, 6).is_none(),
            "part of a word"
        );
        assert!(
            Section::<u32>::mapped(&map, 8, 16).is_none(),
            "past the end"
        );
    }
}

//! NumPy `.npy` files: a reader that memory-maps a one-dimensional array and a writer.
//!
//! The header (magic, version, the dict of `descr`, `fortran_order` and `shape`, padding to 64
//! bytes) is read and written by [`genie_core::npy`]; here are the elements. The writer writes
//! the raw bytes of the slice after a version 1.0 header (one large write, no conversion), so the
//! byte-order mark of `descr` is the machine's (`<` on x86-64 and AArch64).
//!
//! The reader ([`NpyArray`]) checks the header and that the file holds all the data, and hands
//! out the elements of a little-endian array of the common integer types without a copy where
//! the machine is little-endian and the data aligned (always, for files that NumPy writes).

use crate::data_error::DataError;
use memmap2::Mmap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// An element type of an `.npy` array: plain old data with a NumPy type code.
pub trait Element: bytemuck::Pod {
    /// NumPy's kind and size without the byte order, e.g. `u4`.
    const KIND: &'static str;
}

impl Element for u32 {
    const KIND: &'static str = "u4";
}

impl Element for u64 {
    const KIND: &'static str = "u8";
}

impl Element for i32 {
    const KIND: &'static str = "i4";
}

impl Element for i64 {
    const KIND: &'static str = "i8";
}

impl Element for f32 {
    const KIND: &'static str = "f4";
}

/// The `descr` of `T` on this machine, e.g. `<u4`.
pub fn descr<T: Element>() -> String {
    let order = if cfg!(target_endian = "little") {
        '<'
    } else {
        '>'
    };
    format!("{order}{}", T::KIND)
}

/// Writes `data` as an array of `shape` (C order) to `w`.
///
/// # Panics
/// If the product of `shape` is not `data.len()`.
pub fn write_to<T: Element>(w: &mut impl Write, shape: &[usize], data: &[T]) -> io::Result<()> {
    assert_eq!(
        shape.iter().product::<usize>(),
        data.len(),
        "npy shape {shape:?} does not hold {} elements",
        data.len()
    );
    w.write_all(&genie_core::npy::header_bytes(&descr::<T>(), shape))?;
    w.write_all(bytemuck::cast_slice(data))
}

/// Writes `data` as an array of `shape` (C order) to the file `path`, synced to the disk before
/// returning (a large dump then does not go on being written back while something else is timed).
pub fn write<T: Element>(path: &Path, shape: &[usize], data: &[T]) -> Result<(), DataError> {
    if shape.iter().product::<usize>() != data.len() {
        return Err(DataError::File {
            path: path.into(),
            message: format!(
                "an array of shape {shape:?} cannot hold {} elements",
                data.len()
            ),
        });
    }
    let io = |error| DataError::Io {
        path: path.into(),
        error,
    };
    let file = File::create(path).map_err(io)?;
    // slices larger than the buffer bypass it: the postings go to the file in one write_all
    let mut w = BufWriter::with_capacity(1 << 20, file);
    write_to(&mut w, shape, data).map_err(io)?;
    let file = w.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)
}

/// An integer element type of an array being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// `<i4`
    I32,
    /// `<u4`
    U32,
    /// `<i8`
    I64,
    /// `<u8`
    U64,
}

impl Dtype {
    fn from_descr(descr: &str) -> Option<Self> {
        Some(match descr {
            "<i4" => Self::I32,
            "<u4" => Self::U32,
            "<i8" => Self::I64,
            "<u8" => Self::U64,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Self::I32 | Self::U32 => 4,
            Self::I64 | Self::U64 => 8,
        }
    }

    /// NumPy's name of the type.
    pub fn name(self) -> &'static str {
        match self {
            Self::I32 => "int32",
            Self::U32 => "uint32",
            Self::I64 => "int64",
            Self::U64 => "uint64",
        }
    }
}

/// A one-dimensional integer `.npy` array, memory-mapped.
#[derive(Debug)]
pub struct NpyArray {
    map: Option<Mmap>,
    path: std::path::PathBuf,
    dtype: Dtype,
    len: usize,
    data_at: usize,
}

impl NpyArray {
    /// Maps `path` and checks its header: a one-dimensional array of one of `accepted`.
    pub fn open(path: &Path, accepted: &[Dtype]) -> Result<Self, DataError> {
        let bad = |message: String| DataError::File {
            path: path.to_path_buf(),
            message,
        };
        let io = |error| DataError::Io {
            path: path.to_path_buf(),
            error,
        };
        let file = File::open(path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        // SAFETY: the map is read only; a file changed by another process while it is read gives
        // wrong keywords (an error at worst, every index is checked), as a read() would.
        let map = if size == 0 {
            None
        } else {
            Some(unsafe { Mmap::map(&file) }.map_err(io)?)
        };
        let bytes: &[u8] = map.as_deref().unwrap_or(&[]);
        let (descr, shape, data_at) = parse_header(bytes).map_err(bad)?;
        let names: Vec<&str> = accepted.iter().map(|d| d.name()).collect();
        let dtype = Dtype::from_descr(&descr)
            .filter(|d| accepted.contains(d))
            .ok_or_else(|| {
                bad(format!(
                    "dtype {descr:?}: expected little-endian {}",
                    names.join(" or ")
                ))
            })?;
        let [len] = shape[..] else {
            return Err(bad(format!(
                "shape {shape:?}: expected a one-dimensional array"
            )));
        };
        let need = (len as u64).saturating_mul(dtype.size() as u64);
        let have = bytes.len().saturating_sub(data_at) as u64;
        if have < need {
            return Err(bad(format!(
                "truncated: {len} elements of {} need {need} bytes of data, the file has {have}",
                dtype.name()
            )));
        }
        Ok(Self {
            map,
            path: path.to_path_buf(),
            dtype,
            len,
            data_at,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The element type.
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The raw bytes of the elements.
    pub fn data(&self) -> &[u8] {
        let bytes: &[u8] = self.map.as_deref().unwrap_or(&[]);
        &bytes[self.data_at..self.data_at + self.len * self.dtype.size()]
    }

    /// The elements as `u32` without a copy (a `<u4` array, aligned, on a little-endian machine).
    pub fn as_u32(&self) -> Option<&[u32]> {
        (self.dtype == Dtype::U32 && cfg!(target_endian = "little"))
            .then(|| bytemuck::try_cast_slice(self.data()).ok())
            .flatten()
    }

    /// The elements as `u64` without a copy (a `<u8` array, aligned, on a little-endian machine).
    pub fn as_u64(&self) -> Option<&[u64]> {
        (self.dtype == Dtype::U64 && cfg!(target_endian = "little"))
            .then(|| bytemuck::try_cast_slice(self.data()).ok())
            .flatten()
    }

    /// Element `i` widened to `i128` (any of the dtypes fits).
    pub fn get(&self, i: usize) -> i128 {
        let s = self.dtype.size();
        let b = &self.data()[i * s..(i + 1) * s];
        let mut w = [0u8; 8];
        w[..s].copy_from_slice(b);
        match self.dtype {
            Dtype::I32 => i128::from(i32::from_le_bytes([w[0], w[1], w[2], w[3]])),
            Dtype::U32 => i128::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]])),
            Dtype::I64 => i128::from(i64::from_le_bytes(w)),
            Dtype::U64 => i128::from(u64::from_le_bytes(w)),
        }
    }
}

/// Parses the header of an `.npy` file ([`genie_core::npy::parse_header`], which the vector
/// reader uses too): (descr, shape, offset of the data) of a C-order array.
pub fn parse_header(bytes: &[u8]) -> Result<(String, Vec<usize>, usize), String> {
    let h = genie_core::npy::parse_header(bytes)?;
    if h.fortran {
        return Err("fortran_order True: expected a C-order array".into());
    }
    let shape = h
        .shape
        .iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| format!("dimension {d} of the .npy shape is too large"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((h.descr, shape, h.data_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> (String, Vec<usize>, usize) {
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        parse_header(bytes).expect("a header")
    }

    #[test]
    fn arrays_read_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("a.npy");
        let data: Vec<u32> = (0..15).map(|i| i * 1_000_003).collect();
        write(&path, &[5, 3], &data).expect("write");
        let bytes = std::fs::read(&path).expect("read");
        let (d, shape, at) = parse(&bytes);
        assert_eq!(d, descr::<u32>());
        assert_eq!(shape, vec![5, 3]);
        assert_eq!(at % 64, 0);
        let back: Vec<u32> = bytes[at..]
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(back, data);

        let path = dir.path().join("b.npy");
        let wide = [u64::MAX, 0, 1 << 40];
        write(&path, &[3], &wide).expect("write");
        let bytes = std::fs::read(&path).expect("read");
        let (d, shape, at) = parse(&bytes);
        assert_eq!((d.as_str(), shape), (descr::<u64>().as_str(), vec![3]));
        assert_eq!(bytes.len(), at + 24);
        assert_eq!(&bytes[at..at + 8], &u64::MAX.to_ne_bytes());
    }

    #[test]
    fn empty_and_mismatched_shapes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("e.npy");
        write::<u32>(&path, &[0, 3], &[]).expect("write");
        let bytes = std::fs::read(&path).expect("read");
        assert_eq!(parse(&bytes), (descr::<u32>(), vec![0, 3], 128));
        assert_eq!(bytes.len(), 128);
        let err = write(&path, &[2, 2], &[1u32, 2, 3]).expect_err("3 elements in 2 x 2");
        assert!(err.to_string().contains("e.npy"), "{err}");
    }

    #[test]
    fn read_back_mapped() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("k.npy");
        write(&path, &[4], &[7u32, 0, u32::MAX, 3]).expect("write");
        let a = NpyArray::open(&path, &[Dtype::U32]).expect("open");
        assert_eq!(a.len(), 4);
        assert_eq!(a.as_u32(), Some(&[7, 0, u32::MAX, 3][..]));
        assert_eq!(a.get(2), i128::from(u32::MAX));
        let e = NpyArray::open(&path, &[Dtype::I64, Dtype::U64]).expect_err("u4 refused");
        assert!(
            e.to_string().contains("k.npy") && e.to_string().contains("int64 or uint64"),
            "{e}"
        );
        write(&path, &[2, 2], &[1i64, 2, 3, -4]).expect("write");
        let e = NpyArray::open(&path, &[Dtype::I64]).expect_err("2-d");
        assert!(e.to_string().contains("one-dimensional"), "{e}");
        write(&path, &[3], &[1i64, 2, -3]).expect("write");
        let a = NpyArray::open(&path, &[Dtype::I64]).expect("open");
        assert_eq!(a.get(2), -3);
        let bytes = std::fs::read(&path).expect("read");
        std::fs::write(&path, &bytes[..bytes.len() - 1]).expect("truncate");
        let e = NpyArray::open(&path, &[Dtype::I64]).expect_err("truncated");
        assert!(e.to_string().contains("truncated"), "{e}");
        std::fs::write(&path, b"1 2 3\n").expect("text");
        let e = NpyArray::open(&path, &[Dtype::I64]).expect_err("not npy");
        assert!(e.to_string().contains("not a NumPy"), "{e}");
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn little_endian_descr() {
        assert_eq!(descr::<u32>(), "<u4");
        assert_eq!(descr::<u64>(), "<u8");
        assert_eq!(descr::<i32>(), "<i4");
    }
}

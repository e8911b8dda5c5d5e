//! NumPy `.npy` files, format version 1.0, written without NumPy: the magic `\x93NUMPY`, the
//! version bytes `1 0`, the header length (little-endian u16) and the header, a Python dict literal
//! such as `{'descr': '<u4', 'fortran_order': False, 'shape': (5, 3), }` padded with spaces and
//! closed by `\n` so that the data start at a multiple of 64 bytes; then the array's elements in C
//! order. The elements are written as the raw bytes of the slice (one large write, no conversion),
//! so the byte-order mark of `descr` is the machine's (`<` on x86-64 and AArch64).
//!
//! Used to hand an index, its queries and genie's hits to a peer written with NumPy or PyTorch
//! ([`crate::dump`]); `numpy.load` reads these files.

use genie::data_error::DataError;
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

/// The bytes before the data: magic, version 1.0, header length and the header dict, padded so
/// that their total is a multiple of 64.
pub fn header(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dims = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    // magic (6) + version (2) + length (2) + dict + '\n'
    let unpadded = 10 + dict.len() + 1;
    dict.extend(std::iter::repeat_n(
        ' ',
        unpadded.next_multiple_of(64) - unpadded,
    ));
    dict.push('\n');
    let mut out = Vec::with_capacity(10 + dict.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    // a dict of a few dimensions is far below version 1.0's limit of 65,535 bytes
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
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
    w.write_all(&header(&descr::<T>(), shape))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses the header back: (descr, shape, data offset); panics on anything but version 1.0.
    fn parse(bytes: &[u8]) -> (String, Vec<usize>, usize) {
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        let dict = std::str::from_utf8(&bytes[10..10 + len]).expect("ASCII header");
        assert!(dict.ends_with('\n'));
        let descr = dict
            .split("'descr': '")
            .nth(1)
            .and_then(|s| s.split('\'').next())
            .expect("descr");
        let shape = dict
            .split("'shape': (")
            .nth(1)
            .and_then(|s| s.split(')').next())
            .expect("shape");
        let shape = shape
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().expect("a dimension"))
            .collect();
        (descr.to_string(), shape, 10 + len)
    }

    #[test]
    fn header_is_numpy_1_0_padded_to_64() {
        let h = header("<u4", &[5, 3]);
        // NumPy's own files of small arrays have the same 128 bytes before the data
        assert_eq!(h.len(), 128);
        let text = std::str::from_utf8(&h[10..]).expect("ASCII");
        assert_eq!(
            text.trim_end(),
            "{'descr': '<u4', 'fortran_order': False, 'shape': (5, 3), }"
        );
        assert!(text.ends_with(" \n"));
        assert_eq!(header("<u8", &[7]).len() % 64, 0);
        assert!(std::str::from_utf8(&header("<u8", &[7])[10..])
            .expect("ASCII")
            .contains("'shape': (7,)"));
        // padded to the next multiple of 64, never a whole 64 more, as dicts grow past 128
        for dims in 1..40 {
            let h = header("<u8", &vec![1; dims]);
            let text = std::str::from_utf8(&h[10..]).expect("ASCII");
            let unpadded = 10 + text.trim_end().len() + 1;
            assert_eq!(h.len(), unpadded.next_multiple_of(64), "{dims} dimensions");
            assert!(text.ends_with('\n'));
            assert_eq!(u16::from_le_bytes([h[8], h[9]]) as usize, h.len() - 10);
        }
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

    #[cfg(target_endian = "little")]
    #[test]
    fn little_endian_descr() {
        assert_eq!(descr::<u32>(), "<u4");
        assert_eq!(descr::<u64>(), "<u8");
        assert_eq!(descr::<i32>(), "<i4");
    }
}

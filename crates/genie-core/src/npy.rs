//! The header of NumPy `.npy` files, shared by every reader and writer of the workspace (the
//! vectors of `genie-lsh`, the keyword arrays and dumps of the `genie` crate).
//!
//! Format version 1.0 (2.0 and 3.0 are read too): the magic `\x93NUMPY`, the version bytes, the
//! header length (little-endian u16; u32 from version 2.0) and the header, a Python dict literal
//! such as `{'descr': '<u4', 'fortran_order': False, 'shape': (5, 3), }` padded with spaces and
//! closed by `\n` so that the data start at a multiple of 64 bytes; then the array's elements.
//! What the elements are (`descr`) is for the reader to interpret; here it is text.

/// The bytes every `.npy` file starts with.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// What the header of an `.npy` file says (its magic, version and length checked), before any
/// element type is interpreted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The header's dict literal, as text.
    pub dict: String,
    /// The `descr` value without its quotes, e.g. `<f4`.
    pub descr: String,
    /// Whether the array is in Fortran (column-major) order.
    pub fortran: bool,
    /// The shape.
    pub shape: Vec<u64>,
    /// Where the elements start.
    pub data_at: usize,
}

/// Parses the header at the start of `bytes`, a whole file or its first bytes; the error says
/// what is wrong (the caller adds the file).
pub fn parse_header(bytes: &[u8]) -> Result<Header, String> {
    if !bytes.starts_with(MAGIC) {
        return Err("not a NumPy .npy file (no \\x93NUMPY magic at the start)".into());
    }
    let major = *bytes.get(6).ok_or("truncated .npy header")?;
    let (len_at, len_size) = match major {
        1 => (8, 2),
        2 | 3 => (8, 4),
        v => return Err(format!("unsupported .npy format version {v}")),
    };
    let len_bytes = bytes
        .get(len_at..len_at + len_size)
        .ok_or("truncated .npy header")?;
    let header_len = len_bytes
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
    let start = len_at + len_size;
    let text = bytes
        .get(start..start + header_len)
        .ok_or_else(|| format!("truncated .npy header ({header_len} bytes announced)"))?;
    let text = std::str::from_utf8(text).map_err(|_| "the .npy header is not text")?;
    let bad = |r: String| format!("bad .npy header {text:?}: {r}");
    let descr = value_of(text, "descr").ok_or_else(|| bad("no 'descr'".into()))?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let fortran =
        match value_of(text, "fortran_order").ok_or_else(|| bad("no 'fortran_order'".into()))? {
            "True" => true,
            "False" => false,
            other => return Err(bad(format!("bad fortran_order {other:?}"))),
        };
    let shape_text = value_of(text, "shape").ok_or_else(|| bad("no 'shape'".into()))?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| bad("shape is not a tuple".into()))?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<u64>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| bad(format!("bad shape {shape_text}")))?;
    Ok(Header {
        dict: text.to_string(),
        descr: descr.to_string(),
        fortran,
        shape,
        data_at: start + header_len,
    })
}

/// The text of the value of `'key':` in a Python dict literal (a tuple, a quoted string or a word).
fn value_of<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let at = text
        .find(&format!("'{key}'"))
        .or_else(|| text.find(&format!("\"{key}\"")))?;
    let rest = text[at + key.len() + 2..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else if let Some(q) = rest.chars().next().filter(|&c| c == '\'' || c == '"') {
        rest[1..].find(q)? + 2
    } else {
        rest.find([',', '}']).unwrap_or(rest.len())
    };
    Some(rest[..end].trim())
}

/// The bytes before the data of a C-order array of `descr` and `shape`: magic, version 1.0,
/// header length and the header dict, padded so that their total is a multiple of 64.
pub fn header_bytes(descr: &str, shape: &[usize]) -> Vec<u8> {
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
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    // a dict of a few dimensions is far below version 1.0's limit of 65,535 bytes
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(dict: &str) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        out.extend_from_slice(dict.as_bytes());
        out
    }

    #[test]
    fn header_is_numpy_1_0_padded_to_64() {
        let h = header_bytes("<u4", &[5, 3]);
        // NumPy's own files of small arrays have the same 128 bytes before the data
        assert_eq!(h.len(), 128);
        assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
        let text = std::str::from_utf8(&h[10..]).expect("ASCII");
        assert_eq!(
            text.trim_end(),
            "{'descr': '<u4', 'fortran_order': False, 'shape': (5, 3), }"
        );
        assert!(text.ends_with(" \n"));
        assert_eq!(header_bytes("<u8", &[7]).len() % 64, 0);
        assert!(std::str::from_utf8(&header_bytes("<u8", &[7])[10..])
            .expect("ASCII")
            .contains("'shape': (7,)"));
        // padded to the next multiple of 64, never a whole 64 more, as dicts grow past 128
        for dims in 1..40 {
            let h = header_bytes("<u8", &vec![1; dims]);
            let text = std::str::from_utf8(&h[10..]).expect("ASCII");
            let unpadded = 10 + text.trim_end().len() + 1;
            assert_eq!(h.len(), unpadded.next_multiple_of(64), "{dims} dimensions");
            assert!(text.ends_with('\n'));
            assert_eq!(u16::from_le_bytes([h[8], h[9]]) as usize, h.len() - 10);
        }
    }

    #[test]
    fn written_headers_parse_back() {
        for shape in [vec![0], vec![7], vec![5, 3], vec![2, 0, 4]] {
            let h = header_bytes("<f4", &shape);
            let parsed = parse_header(&h).expect("a header");
            assert_eq!(parsed.descr, "<f4");
            assert!(!parsed.fortran);
            let wide: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
            assert_eq!(parsed.shape, wide);
            assert_eq!(parsed.data_at, h.len());
        }
    }

    #[test]
    fn dict_variants() {
        let h = parse_header(&npy(
            "{\"descr\": \"|u1\", \"fortran_order\": True, \"shape\": (2L,3L)}",
        ))
        .expect("a header");
        assert_eq!((h.descr.as_str(), h.fortran), ("|u1", true));
        assert_eq!(h.shape, vec![2, 3]);
        let h = parse_header(&npy(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
        ))
        .expect("a scalar");
        assert!(h.shape.is_empty());
    }

    #[test]
    fn bad_headers() {
        let msg = |b: &[u8]| parse_header(b).expect_err("refused");
        assert!(msg(b"hello").contains("not a NumPy .npy file"));
        assert!(msg(b"\x93NUMPY").contains("truncated .npy header"));
        assert!(msg(b"\x93NUMPY\x09\x00").contains("unsupported .npy format version 9"));
        assert!(msg(b"\x93NUMPY\x01\x00\xff\x00{").contains("truncated .npy header (255 bytes"));
        let d = |dict: &str| msg(&npy(dict));
        assert!(
            d("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }")
                .contains("bad fortran_order \"Maybe\"")
        );
        assert!(
            d("{'descr': '<f4', 'fortran_order': False, 'shape': (x, 1), }")
                .contains("bad shape (x, 1)")
        );
        assert!(d("{'descr': '<f4', 'fortran_order': False, 'shape': 3, }")
            .contains("shape is not a tuple"));
        assert!(d("{'descr': '<f4', 'fortran_order': False}").contains("no 'shape'"));
        assert!(d("{'fortran_order': False, 'shape': (1,)}").contains("no 'descr'"));
        assert!(d("{'descr': '<f4', 'shape': (1,)}").contains("no 'fortran_order'"));
    }
}

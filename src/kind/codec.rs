//! How a keyword object travels in a live index's write-ahead log: its keywords sorted and
//! de-duplicated (what the index keeps of it), as LEB128 varints of the first keyword and then
//! of each gap.
//! A SIFT-like object of 237 keywords takes about a third of its 948 bytes as 32-bit integers.

use genie_core::Keyword;

/// The keywords as the index keeps them: sorted, each once.
pub fn normalize(mut keywords: Vec<Keyword>) -> Vec<Keyword> {
    keywords.sort_unstable();
    keywords.dedup();
    keywords
}

/// Encodes sorted, de-duplicated keywords.
pub fn encode(keywords: &[Keyword], out: &mut Vec<u8>) {
    let mut prev = 0u32;
    for (i, &k) in keywords.iter().enumerate() {
        let mut v = if i == 0 { k } else { k - prev };
        prev = k;
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
    }
}

/// Decodes what [`encode`] wrote; `None` for bytes it cannot have written.
pub fn decode(bytes: &[u8]) -> Option<Vec<Keyword>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut prev = 0u32;
    while i < bytes.len() {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = *bytes.get(i)?;
            i += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 28 {
                return None;
            }
        }
        let gap = u32::try_from(v).ok()?;
        let k = if out.is_empty() {
            gap
        } else {
            if gap == 0 {
                return None;
            }
            prev.checked_add(gap)?
        };
        out.push(k);
        prev = k;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn keywords_come_back(kw in proptest::collection::vec(any::<u32>(), 0..300)) {
            let kw = normalize(kw);
            let mut bytes = Vec::new();
            encode(&kw, &mut bytes);
            prop_assert_eq!(decode(&bytes), Some(kw));
        }

        #[test]
        fn any_bytes_decode_or_refuse(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Some(kw) = decode(&bytes) {
                prop_assert!(kw.windows(2).all(|w| w[0] < w[1]));
            }
        }
    }
}

//! Comma-separated vectors: one vector a line, values parsed as `f32`; every line has the same
//! number of values. The first line may be a header (it is skipped when none of its fields is a
//! number). Blank lines are skipped. Errors name the file and the 1-based line.

use crate::error::{LshError, Result};
use crate::vectors::VectorSet;
use std::path::Path;

/// Parses a whole CSV file.
pub fn parse(bytes: &[u8], path: &Path) -> Result<VectorSet> {
    let row_err = |row: usize, reason: String| LshError::Row {
        path: path.to_path_buf(),
        row: row as u64,
        reason,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        row_err(line, "not valid UTF-8 text".into())
    })?;
    let mut dim = None;
    let mut data = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if dim.is_none() && i == 0 && fields.iter().all(|f| f.parse::<f32>().is_err()) {
            continue; // a header
        }
        let want = *dim.get_or_insert(fields.len());
        if fields.len() != want {
            return Err(row_err(
                i + 1,
                format!(
                    "{} values, expected {want} (as on the first row)",
                    fields.len()
                ),
            ));
        }
        for (col, f) in fields.iter().enumerate() {
            let x: f32 = f.parse().map_err(|_| {
                row_err(i + 1, format!("column {}: {f:?} is not a number", col + 1))
            })?;
            data.push(x);
        }
    }
    let dim = dim.ok_or_else(|| LshError::format(path, "no vector (empty CSV file)"))?;
    VectorSet::new(dim, data)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn p() -> &'static Path {
        Path::new("v.csv")
    }

    #[test]
    fn rows_and_header() {
        let s = parse(b"x,y\n1,2\r\n\n 3 , -4.5e1\n", p()).unwrap();
        assert_eq!(s.as_slice(), &[1.0, 2.0, 3.0, -45.0]);
        let s = parse(b"1,2,3", p()).unwrap();
        assert_eq!((s.len(), s.dim()), (1, 3));
    }

    #[test]
    fn bad_inputs() {
        let msg = |b: &[u8]| parse(b, p()).unwrap_err().to_string();
        assert_eq!(msg(b""), "v.csv: no vector (empty CSV file)");
        assert_eq!(msg(b"a,b\n"), "v.csv: no vector (empty CSV file)");
        assert_eq!(
            msg(b"1,2\n3\n"),
            "v.csv:2: 1 values, expected 2 (as on the first row)"
        );
        assert_eq!(
            msg(b"1,2\n3,x\n"),
            "v.csv:2: column 2: \"x\" is not a number"
        );
        assert_eq!(msg(b"a,1\n"), "v.csv:1: column 1: \"a\" is not a number");
        assert_eq!(msg(b"1,2\n\xff\n"), "v.csv:2: not valid UTF-8 text");
    }
}

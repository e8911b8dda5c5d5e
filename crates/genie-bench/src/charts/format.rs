//! The number formats of the charts' ticks and labels, and the file names of their footers.

use std::path::Path;

/// `1234567.0` -> `1,234,567` (rounded to an integer).
pub fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// A short decimal: `0.05`, `2`, `17.3`; thousands separated from 1,000 up.
pub fn plain(v: f64) -> String {
    if v.abs() >= 1000.0 {
        return thousands(v);
    }
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// `6000000.0` -> `6 M`.
pub fn millions(v: f64) -> String {
    format!("{} M", plain(v / 1e6))
}

/// The last part of `path`, for the footers' lists of sources.
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats() {
        assert_eq!(thousands(16384.0), "16,384");
        assert_eq!(thousands(64.0), "64");
        assert_eq!(thousands(1_000_000.0), "1,000,000");
        assert_eq!(plain(0.05), "0.05");
        assert_eq!(plain(2.0), "2");
        assert_eq!(plain(20000.0), "20,000");
        assert_eq!(millions(36e6), "36 M");
    }
}

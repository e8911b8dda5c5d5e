//! Objects files in text (one object per line, whitespace-separated unsigned 32-bit keywords),
//! parsed in parallel: the file is read in large blocks (doubling from 64 KiB to 8 MiB per thread;
//! the next block is read while the current one is parsed), each block is cut at line ends into pieces that rayon parses at once, and the
//! pieces go to the sink in file order. Standard input takes the same path.
//!
//! The parser scans bytes: ASCII digits and ASCII whitespace take the fast path; a line with
//! anything else (a sign, a letter, a number past `u32::MAX`, non-ASCII bytes) is parsed again by
//! [`crate::input::parse_object_line`], so its keywords or its error are exactly those of the line
//! reader ([`crate::input::LineReader`]), with the file's 1-based line number.

use super::{Batch, Sink};
use crate::data_error::DataError;
use crate::input::{parse_object_line, InputError, TokenError, STDIN_PATH};
use genie_core::Keyword;
use rayon::prelude::*;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Bytes read at a time: 8 MiB per thread, between 16 and 256 MiB.
fn block_size() -> usize {
    (rayon::current_num_threads() << 23).clamp(16 << 20, 256 << 20)
}

/// The first block's size.
const FIRST_BLOCK: usize = 64 << 10;

/// Smallest piece of a block parsed by one task.
const MIN_PIECE: usize = 256 << 10;

/// Reads the objects of a text file (`-`: standard input) and hands them to `sink` in order;
/// returns the number of objects (lines).
pub fn read(path: &Path, sink: &mut Sink<'_>) -> Result<u64, DataError> {
    let source: Box<dyn Read + Send> = if path.as_os_str() == STDIN_PATH {
        Box::new(io::stdin())
    } else {
        let open_err = |source| InputError::Open {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(open_err)?;
        if file.metadata().map_err(open_err)?.is_dir() {
            return Err(open_err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a directory",
            ))
            .into());
        }
        Box::new(file)
    };
    read_from(source, path, sink)
}

/// [`read`] from any source; `path` names it in messages.
pub fn read_from(
    mut source: Box<dyn Read + Send>,
    path: &Path,
    sink: &mut Sink<'_>,
) -> Result<u64, DataError> {
    let mut lines = 0u64;
    let mut bytes = 0u64;
    let read_err = |lines: u64, source| InputError::Read {
        path: path.to_path_buf(),
        line: lines + 1,
        source,
    };
    // blocks start small (a small input costs little) and double up to the block size
    let target = block_size();
    let mut cur = vec![0u8; FIRST_BLOCK.min(target)];
    let mut next = vec![0u8; cur.len()];
    // the parsed pieces of a block, kept from block to block: fresh buffers each time would be
    // fresh pages, faulted in again
    let mut pieces: Vec<Parsed> = Vec::new();
    let (mut filled, mut eof) = fill(&mut source, &mut cur, 0).map_err(|e| read_err(0, e))?;
    loop {
        let end = if eof {
            filled
        } else {
            match cur[..filled].iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                None => {
                    // a line longer than the block: read more of it
                    cur.resize(cur.len() * 2, 0);
                    (filled, eof) =
                        fill(&mut source, &mut cur, filled).map_err(|e| read_err(lines, e))?;
                    continue;
                }
            }
        };
        if end == 0 {
            return Ok(lines);
        }
        let rest = filled - end;
        if next.len() < cur.len() {
            next.resize(cur.len(), 0);
        }
        next[..rest].copy_from_slice(&cur[end..filled]);
        let (results, read_next) = std::thread::scope(|s| {
            let reader = (!eof).then(|| s.spawn(|| fill(&mut source, &mut next, rest)));
            let results = parse_block(&cur[..end], &mut pieces);
            let read_next =
                reader.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            (results, read_next)
        });
        for (piece, result) in pieces.iter().zip(results) {
            result.map_err(|(line, fault)| fault.at(path, lines + line + 1))?;
            bytes += piece.bytes as u64;
            sink(Batch {
                offsets: &piece.offsets,
                keywords: &piece.keywords,
                first: lines,
                bytes,
            })?;
            lines += piece.objects();
        }
        match read_next {
            Some(r) => (filled, eof) = r.map_err(|e| read_err(lines, e))?,
            None => (filled, eof) = (rest, true),
        }
        std::mem::swap(&mut cur, &mut next);
        if eof && filled == 0 {
            return Ok(lines);
        }
        if cur.len() < target {
            cur.resize(cur.len() * 2, 0);
        }
    }
}

/// Fills `buf` from `filled` on; returns the bytes now in it and whether the source ended.
fn fill(source: &mut impl Read, buf: &mut [u8], mut filled: usize) -> io::Result<(usize, bool)> {
    while filled < buf.len() {
        match source.read(&mut buf[filled..]) {
            Ok(0) => return Ok((filled, true)),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((filled, false))
}

/// The objects of a run of whole lines.
#[derive(Debug, Default)]
pub struct Parsed {
    /// `offsets[i]..offsets[i + 1]` are the keywords of line `i` (starts at 0).
    pub offsets: Vec<u64>,
    /// The keywords.
    pub keywords: Vec<Keyword>,
    /// The bytes parsed.
    pub bytes: usize,
}

impl Parsed {
    fn objects(&self) -> u64 {
        self.offsets.len() as u64 - 1
    }
}

/// Why a line was rejected, before its file and number are known.
#[derive(Debug)]
pub enum LineFault {
    /// Not valid UTF-8; the 1-based column of the first bad byte.
    NotUtf8(usize),
    /// A bad token.
    Token(TokenError),
}

impl LineFault {
    fn at(self, path: &Path, line: u64) -> DataError {
        let path = path.to_path_buf();
        match self {
            Self::NotUtf8(column) => InputError::NotUtf8 { path, line, column },
            Self::Token(error) => InputError::Token { path, line, error },
        }
        .into()
    }
}

/// Parses whole lines (`block` ends with a line end, or is the end of the file) in pieces in
/// parallel into `pieces` (resized to the pieces of this block). A piece's error carries the
/// 0-based line within that piece; the caller adds the lines before it.
fn parse_block(block: &[u8], pieces: &mut Vec<Parsed>) -> Vec<Result<(), (u64, LineFault)>> {
    let target = (block.len() / (rayon::current_num_threads() * 4)).max(MIN_PIECE);
    let mut cuts = vec![0];
    let mut at = 0;
    while at + target < block.len() {
        match block[at + target..].iter().position(|&b| b == b'\n') {
            Some(i) => at += target + i + 1,
            None => break,
        }
        cuts.push(at);
    }
    if *cuts.last().unwrap_or(&0) < block.len() {
        cuts.push(block.len());
    }
    pieces.resize_with(cuts.len() - 1, Parsed::default);
    cuts.par_windows(2)
        .zip(pieces.par_iter_mut())
        .map(|(w, piece)| parse_lines_into(&block[w[0]..w[1]], piece))
        .collect()
}

/// Parses whole lines; an error carries the 0-based line within `bytes`.
pub fn parse_lines(bytes: &[u8]) -> Result<Parsed, (u64, LineFault)> {
    let mut parsed = Parsed::default();
    parse_lines_into(bytes, &mut parsed)?;
    Ok(parsed)
}

/// [`parse_lines`] into `out`, reusing its buffers.
pub fn parse_lines_into(bytes: &[u8], out: &mut Parsed) -> Result<(), (u64, LineFault)> {
    let Parsed {
        offsets, keywords, ..
    } = out;
    keywords.clear();
    offsets.clear();
    keywords.reserve(bytes.len() / 4);
    offsets.reserve(bytes.len() / 64 + 2);
    offsets.push(0u64);
    out.bytes = bytes.len();
    let mut start = 0;
    let mut line = 0u64;
    while start < bytes.len() {
        let line_start = keywords.len();
        let (mut value, mut digits, mut slow) = (0u64, false, false);
        let mut j = start;
        while let Some(&b) = bytes.get(j) {
            let d = b.wrapping_sub(b'0');
            if d < 10 {
                value = value * 10 + u64::from(d);
                digits = true;
                if value > u64::from(u32::MAX) {
                    slow = true;
                    break;
                }
            } else if matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c) {
                if digits {
                    keywords.push(value as Keyword);
                    (value, digits) = (0, false);
                }
            } else if b == b'\n' {
                break;
            } else {
                slow = true;
                break;
            }
            j += 1;
        }
        let end = if slow {
            let end = bytes[j..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |k| j + k);
            keywords.truncate(line_start);
            slow_line(&bytes[start..end], keywords).map_err(|f| (line, f))?;
            end
        } else {
            if digits {
                keywords.push(value as Keyword);
            }
            j
        };
        offsets.push(keywords.len() as u64);
        line += 1;
        start = end + 1;
    }
    Ok(())
}

/// A line the fast path does not take, parsed as the line reader does.
fn slow_line(line: &[u8], out: &mut Vec<Keyword>) -> Result<(), LineFault> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = std::str::from_utf8(line).map_err(|e| LineFault::NotUtf8(e.valid_up_to() + 1))?;
    let mut keywords = Vec::new();
    parse_object_line(text, &mut keywords).map_err(LineFault::Token)?;
    out.extend_from_slice(&keywords);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::LineReader;

    /// The objects of `text` as the line reader gives them, or its error message.
    fn by_lines(text: &[u8]) -> Result<Vec<Vec<Keyword>>, String> {
        let mut r = LineReader::new(
            Box::new(io::Cursor::new(text.to_vec())),
            Path::new("o.txt"),
            None,
        );
        let mut out = Vec::new();
        let mut kws = Vec::new();
        while r.next_object(&mut kws).map_err(|e| e.to_string())? {
            out.push(kws.clone());
        }
        Ok(out)
    }

    /// The objects of `text` read in blocks, or the error message.
    fn by_blocks(text: &[u8]) -> Result<Vec<Vec<Keyword>>, String> {
        let mut out = Vec::new();
        let mut sink = |b: Batch<'_>| {
            assert_eq!(b.first, out.len() as u64);
            for w in b.offsets.windows(2) {
                out.push(b.keywords[w[0] as usize..w[1] as usize].to_vec());
            }
            Ok(())
        };
        let n = read_from(
            Box::new(io::Cursor::new(text.to_vec())),
            Path::new("o.txt"),
            &mut sink,
        )
        .map_err(|e| e.to_string())?;
        assert_eq!(n, out.len() as u64);
        Ok(out)
    }

    #[test]
    fn same_as_the_line_reader() {
        let cases: &[&[u8]] = &[
            b"",
            b"\n",
            b"\n\n",
            b"1 2 3",
            b"1 2 3\n",
            b"  7\t 8 \r\n\r\n9",
            b"007 4294967295\n0\n",
            b"1\x0b2\x0c3\n",
            "1\u{a0}2 \u{3000}3\n".as_bytes(),
            b"1 2\n3 x\n4\n",
            b"1\n2\n4294967296\n",
            b"1\n-3\n",
            b"1\n99999999999999999999999999\n",
            b"1 2\n3 \xff4\n",
            b"5 +1\n",
            b"1-2\n",
        ];
        for text in cases {
            assert_eq!(
                by_blocks(text),
                by_lines(text),
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
        assert_eq!(
            by_blocks(b"1 2\n3 x\n4\n").expect_err("x"),
            r#"o.txt:2: bad keyword "x": expected an unsigned 32-bit integer"#
        );
    }

    #[test]
    fn many_blocks_and_pieces_keep_order_and_lines() {
        // several pieces per block and a few blocks (up to 16 MiB each at least)
        let mut text = String::new();
        let mut want = Vec::new();
        let mut i = 0u32;
        while text.len() < 40 << 20 {
            let obj: Vec<u32> = (0..i % 7)
                .map(|k| i.wrapping_mul(2_654_435_761).rotate_left(k))
                .collect();
            for k in &obj {
                text.push_str(&k.to_string());
                text.push(' ');
            }
            text.push('\n');
            want.push(obj);
            i += 1;
        }
        assert_eq!(by_blocks(text.as_bytes()).expect("valid"), want);
        let bad_line = want.len() - 3;
        let mut lines: Vec<&str> = text.lines().collect();
        lines[bad_line] = "12 4294967296";
        let bad = lines.join("\n");
        assert_eq!(
            by_blocks(bad.as_bytes()).expect_err("too large"),
            format!(
                "o.txt:{}: bad keyword \"4294967296\": expected an unsigned 32-bit integer \
                 (larger than 4294967295)",
                bad_line + 1
            )
        );
    }

    #[test]
    fn a_line_longer_than_a_block() {
        let long: String = (0..5_000_000u32).map(|k| format!("{k} ")).collect();
        let text = format!("1\n{long}\n2");
        let objs = by_blocks(text.as_bytes()).expect("valid");
        assert_eq!(objs.len(), 3);
        assert_eq!(objs[1].len(), 5_000_000);
        assert_eq!(objs[2], [2]);
    }
}

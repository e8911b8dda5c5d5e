//! Parsing of the text input files, line by line, in bounded memory.
//!
//! * An **objects file** has one object per line: its keywords as whitespace-separated unsigned
//!   32-bit integers. An empty line is an object without keywords; object ids are the 0-based line
//!   numbers.
//! * A **queries file** has one query per line: whitespace-separated items `KW` or `LO-HI`, each
//!   optionally followed by `:WEIGHT` (e.g. `7 10-20 3:2`), with `LO <= HI` and `WEIGHT >= 1`. An
//!   empty line is an empty query.
//!
//! Every error names the file, the 1-based line, the offending token and what was expected, e.g.
//! `queries.txt:3: bad item "4-x": expected KW, LO-HI, optionally :WEIGHT with unsigned 32-bit
//! integers`.

use genie_core::{Item, Keyword, Query};
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// The path that names standard input.
pub const STDIN_PATH: &str = "-";

/// What kind of token was being parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// A keyword of an objects file.
    Keyword,
    /// An item of a queries file.
    Item,
}

/// Why a token was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    /// Not of the expected form (a number part is empty or has a non-digit).
    Syntax,
    /// A number is negative.
    Negative,
    /// A number exceeds `u32::MAX`.
    TooLarge,
    /// A range has `LO > HI`.
    LoAboveHi,
    /// A weight is 0.
    ZeroWeight,
}

/// A rejected token of one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenError {
    /// What the token should have been.
    pub kind: TokenKind,
    /// The token as written.
    pub token: String,
    /// What is wrong with it.
    pub problem: Problem,
}

/// What a query item looks like, for error messages.
pub const ITEM_SYNTAX: &str = "KW, LO-HI, optionally :WEIGHT with unsigned 32-bit integers";

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, expected) = match self.kind {
            TokenKind::Keyword => ("keyword", "an unsigned 32-bit integer"),
            TokenKind::Item => ("item", ITEM_SYNTAX),
        };
        write!(f, "bad {what} {:?}: ", self.token)?;
        match self.problem {
            Problem::Syntax => write!(f, "expected {expected}"),
            Problem::Negative => {
                write!(f, "expected {expected} (negative numbers are not allowed)")
            }
            Problem::TooLarge => write!(f, "expected {expected} (larger than {})", u32::MAX),
            Problem::LoAboveHi => write!(f, "expected LO <= HI in LO-HI"),
            Problem::ZeroWeight => write!(f, "expected a weight of at least 1 in :WEIGHT"),
        }
    }
}

impl std::error::Error for TokenError {}

/// Parses an unsigned 32-bit integer made of ASCII digits only (no sign, no spaces).
#[inline]
pub fn parse_u32(s: &str) -> Result<u32, Problem> {
    // one pass over the digits (every keyword of the input files and queries comes here)
    // (held in 64 bits, which 19 digits cannot overflow; a longer number is kept from growing
    // past 2^33: above u32::MAX it stays too large)
    let cap = if s.len() > 19 { 1 << 33 } else { u64::MAX };
    let mut value = 0u64;
    for &b in s.as_bytes() {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
            return Err(if s.strip_prefix('-').is_some_and(digits) {
                Problem::Negative
            } else {
                Problem::Syntax
            });
        }
        value = (value * 10 + u64::from(d)).min(cap);
    }
    if s.is_empty() {
        return Err(Problem::Syntax);
    }
    u32::try_from(value).map_err(|_| Problem::TooLarge)
}

/// Parses the keywords of one line of an objects file into `out` (cleared first).
pub fn parse_object_line(line: &str, out: &mut Vec<Keyword>) -> Result<(), TokenError> {
    out.clear();
    for token in line.split_whitespace() {
        let kw = parse_u32(token).map_err(|problem| TokenError {
            kind: TokenKind::Keyword,
            token: token.to_string(),
            problem,
        })?;
        out.push(kw);
    }
    Ok(())
}

/// Parses one query item: `KW`, `LO-HI`, either optionally followed by `:WEIGHT`.
pub fn parse_item(token: &str) -> Result<Item, TokenError> {
    // a plain keyword, the usual item, read without looking for a range or a weight
    match parse_u32(token).ok() {
        Some(kw) => Ok(Item {
            lo: kw,
            hi: kw,
            weight: 1,
        }),
        None => parse_any_item(token),
    }
}

/// [`parse_item`] of any token, by its grammar.
fn parse_any_item(token: &str) -> Result<Item, TokenError> {
    let err = |problem| TokenError {
        kind: TokenKind::Item,
        token: token.to_string(),
        problem,
    };
    let (range, weight) = match token.split_once(':') {
        Some((range, weight)) => (range, parse_u32(weight).map_err(err)?),
        None => (token, 1),
    };
    let (lo, hi) = match range.split_once('-') {
        // "-5" is a negative keyword rather than a range with an empty low end
        Some(("", rest)) if rest.starts_with(|c: char| c.is_ascii_digit()) => {
            return Err(err(Problem::Negative))
        }
        Some((lo, hi)) => (parse_u32(lo).map_err(err)?, parse_u32(hi).map_err(err)?),
        None => {
            let kw = parse_u32(range).map_err(err)?;
            (kw, kw)
        }
    };
    if lo > hi {
        return Err(err(Problem::LoAboveHi));
    }
    if weight == 0 {
        return Err(err(Problem::ZeroWeight));
    }
    Ok(Item { lo, hi, weight })
}

/// Parses one line of a queries file.
pub fn parse_query_line(line: &str) -> Result<Query, TokenError> {
    // (an ASCII line without vertical tabs, the usual one, split on ASCII whitespace: the same
    // tokens as Unicode whitespace gives there, found faster)
    let items = if line.bytes().all(|b| b.is_ascii() && b != 0x0B) {
        line.split_ascii_whitespace()
            .map(parse_item)
            .collect::<Result<Vec<_>, _>>()?
    } else {
        line.split_whitespace()
            .map(parse_item)
            .collect::<Result<Vec<_>, _>>()?
    };
    Ok(Query { items })
}

/// An error reading an input file; its message names the file and, where known, the line.
#[derive(Debug)]
pub enum InputError {
    /// The file could not be opened.
    Open {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Reading failed in the middle of the file.
    Read {
        /// The file.
        path: PathBuf,
        /// The 1-based line being read.
        line: u64,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is not valid UTF-8.
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// The 1-based column (byte) of the first invalid byte.
        column: usize,
    },
    /// A token of a line was rejected.
    Token {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// The token and why.
        error: TokenError,
    },
}

/// How a path is shown in messages (`<stdin>` for `-`).
pub fn display_path(path: &Path) -> String {
    if path.as_os_str() == STDIN_PATH {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// Where line `line` (1-based) of `path` is, for messages: `queries.txt:3`.
pub fn line_place(path: &Path, line: u64) -> String {
    format!("{}:{line}", display_path(path))
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Open { path, source } => {
                write!(f, "{}: cannot open: {source}", display_path(path))
            }
            Self::Read { path, line, source } => {
                write!(f, "{}:{line}: read error: {source}", display_path(path))
            }
            Self::NotUtf8 { path, line, column } => write!(
                f,
                "{}:{line}: line is not valid UTF-8 (invalid byte at column {column})",
                display_path(path)
            ),
            Self::Token { path, line, error } => {
                write!(f, "{}:{line}: {error}", display_path(path))
            }
        }
    }
}

/// The causes are part of the messages, so none is a separate source (a chain of causes would
/// print the OS error twice).
impl std::error::Error for InputError {}

/// Reads a text file line by line with one reusable buffer, counting lines and bytes.
pub struct LineReader {
    reader: Box<dyn BufRead>,
    path: PathBuf,
    buf: Vec<u8>,
    /// The length of the last line in `buf`, without its terminator.
    line_len: usize,
    line: u64,
    bytes: u64,
    len: Option<u64>,
}

impl fmt::Debug for LineReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineReader")
            .field("path", &self.path)
            .field("line", &self.line)
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// Lines of a file read at once ([`LineReader::next_block`]): their bytes in one buffer, each
/// line's span, and the number of the first.
#[derive(Debug)]
pub struct LineBlock {
    text: Vec<u8>,
    spans: Vec<(usize, usize)>,
    first_line: u64,
    path: PathBuf,
}

impl LineBlock {
    /// The lines it holds.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether it holds no line (the file had ended).
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Line `i` of the block without its terminator; the error names the file, the line and
    /// the column of a byte that is not UTF-8.
    pub fn line(&self, i: usize) -> Result<&str, InputError> {
        let (a, b) = self.spans[i];
        std::str::from_utf8(&self.text[a..b]).map_err(|e| InputError::NotUtf8 {
            path: self.path.clone(),
            line: self.first_line + i as u64,
            column: e.valid_up_to() + 1,
        })
    }

    /// Where line `i` came from, for messages (`queries.txt:3`).
    pub fn place(&self, i: usize) -> String {
        line_place(&self.path, self.first_line + i as u64)
    }
}

impl LineReader {
    /// Opens `path` (`-` is standard input).
    pub fn open(path: &Path) -> Result<Self, InputError> {
        if path.as_os_str() == STDIN_PATH {
            return Ok(Self::new(
                Box::new(BufReader::new(std::io::stdin())),
                path,
                None,
            ));
        }
        let open_err = |source| InputError::Open {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(open_err)?;
        let meta = file.metadata().map_err(open_err)?;
        if meta.is_dir() {
            return Err(open_err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "is a directory",
            )));
        }
        let len = meta.is_file().then_some(meta.len());
        Ok(Self::new(
            Box::new(BufReader::with_capacity(1 << 16, file)),
            path,
            len,
        ))
    }

    /// A reader over any buffered source; `path` names it in errors, `len` is its size if known.
    pub fn new(reader: Box<dyn BufRead>, path: &Path, len: Option<u64>) -> Self {
        Self {
            reader,
            path: path.to_path_buf(),
            buf: Vec::new(),
            line_len: 0,
            line: 0,
            bytes: 0,
            len,
        }
    }

    /// The file's path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the last line returned came from, for messages (`queries.txt:3`).
    pub fn location(&self) -> String {
        line_place(&self.path, self.line)
    }

    /// Lines read so far (the 1-based number of the last line returned).
    pub fn lines_read(&self) -> u64 {
        self.line
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// The size of the file in bytes, when it is a regular file.
    pub fn len(&self) -> Option<u64> {
        self.len
    }

    /// Whether the file is known to be empty.
    pub fn is_empty(&self) -> bool {
        self.len == Some(0)
    }

    /// The next line without its line terminator (`\n` or `\r\n`), or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<&str>, InputError> {
        if self.next_bytes()?.is_none() {
            return Ok(None);
        }
        match std::str::from_utf8(&self.buf[..self.line_len]) {
            Ok(s) => Ok(Some(s)),
            Err(e) => Err(InputError::NotUtf8 {
                path: self.path.clone(),
                line: self.line,
                column: e.valid_up_to() + 1,
            }),
        }
    }

    /// The next line as bytes (any bytes but the line terminator), or `None` at the end.
    pub fn next_line_bytes(&mut self) -> Result<Option<&[u8]>, InputError> {
        Ok(self.next_bytes()?.map(|n| &self.buf[..n]))
    }

    /// Reads the next line into the buffer; its length without the terminator.
    fn next_bytes(&mut self) -> Result<Option<usize>, InputError> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let read = self.append_line(&mut buf);
        self.buf = buf;
        let len = read?;
        self.line_len = len.unwrap_or(0);
        Ok(len)
    }

    /// Appends the next line, terminator and all, to `buf`; its length without the terminator,
    /// or `None` at the end.
    fn append_line(&mut self, buf: &mut Vec<u8>) -> Result<Option<usize>, InputError> {
        let start = buf.len();
        let n = self
            .reader
            .read_until(b'\n', buf)
            .map_err(|source| InputError::Read {
                path: self.path.clone(),
                line: self.line + 1,
                source,
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        self.bytes += n as u64;
        let mut text = &buf[start..];
        if let Some(t) = text.strip_suffix(b"\n") {
            text = t.strip_suffix(b"\r").unwrap_or(t);
        }
        Ok(Some(text.len()))
    }

    /// The next `max` lines at most (fewer at the end of the file), read into one buffer: what
    /// a front end parses on all cores. Nothing is allocated per line, and a line's place is
    /// made only for its error ([`LineBlock::place`]).
    pub fn next_block(&mut self, max: usize) -> Result<LineBlock, InputError> {
        let mut block = LineBlock {
            text: Vec::new(),
            spans: Vec::with_capacity(max.min(1 << 16)),
            first_line: self.line + 1,
            path: self.path.clone(),
        };
        while block.spans.len() < max {
            let start = block.text.len();
            let Some(len) = self.append_line(&mut block.text)? else {
                break;
            };
            block.spans.push((start, start + len));
        }
        Ok(block)
    }

    fn token_error(&self, error: TokenError) -> InputError {
        InputError::Token {
            path: self.path.clone(),
            line: self.line,
            error,
        }
    }

    /// The next query line's items (see [`parse_query_line`]), or `None` at the end of the file.
    pub fn next_query(&mut self) -> Result<Option<Query>, InputError> {
        let parsed = match self.next_line()? {
            None => return Ok(None),
            Some(line) => parse_query_line(line),
        };
        parsed.map(Some).map_err(|e| self.token_error(e))
    }

    /// Reads the next object's keywords into `out`; `false` at the end of the file.
    pub fn next_object(&mut self, out: &mut Vec<Keyword>) -> Result<bool, InputError> {
        let parsed = match self.next_line()? {
            None => return Ok(false),
            Some(line) => parse_object_line(line, out),
        };
        parsed.map_err(|e| self.token_error(e))?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(lo: u32, hi: u32, weight: u32) -> Item {
        Item { lo, hi, weight }
    }

    fn reader(text: &'static [u8]) -> LineReader {
        LineReader::new(Box::new(text), Path::new("q.txt"), Some(text.len() as u64))
    }

    #[test]
    fn u32_numbers() {
        assert_eq!(parse_u32("0"), Ok(0));
        assert_eq!(parse_u32("007"), Ok(7));
        assert_eq!(parse_u32("4294967295"), Ok(u32::MAX));
        assert_eq!(parse_u32("4294967296"), Err(Problem::TooLarge));
        assert_eq!(parse_u32("99999999999999999999999"), Err(Problem::TooLarge));
        assert_eq!(parse_u32("000000000000000000000042"), Ok(42));
        assert_eq!(parse_u32("-1"), Err(Problem::Negative));
        assert_eq!(parse_u32("+1"), Err(Problem::Syntax));
        assert_eq!(parse_u32(""), Err(Problem::Syntax));
        assert_eq!(parse_u32("-"), Err(Problem::Syntax));
        assert_eq!(parse_u32("1.5"), Err(Problem::Syntax));
        assert_eq!(parse_u32("x"), Err(Problem::Syntax));
        assert_eq!(parse_u32("１"), Err(Problem::Syntax));
    }

    #[test]
    fn object_lines() {
        let mut out = vec![99];
        parse_object_line("", &mut out).expect("empty line");
        assert!(out.is_empty());
        parse_object_line(" 3\t1  2 3 ", &mut out).expect("valid line");
        assert_eq!(out, [3, 1, 2, 3]);
        let e = parse_object_line("1 x 3", &mut out).expect_err("x");
        assert_eq!(
            e.to_string(),
            r#"bad keyword "x": expected an unsigned 32-bit integer"#
        );
        let e = parse_object_line("-3", &mut out).expect_err("negative");
        assert_eq!(e.problem, Problem::Negative);
        let e = parse_object_line("4294967296", &mut out).expect_err("too large");
        assert_eq!(e.problem, Problem::TooLarge);
        assert!(e.to_string().contains("4294967295"));
        let e = parse_object_line("1-2", &mut out).expect_err("range in object");
        assert_eq!(e.problem, Problem::Syntax);
    }

    #[test]
    fn items() {
        assert_eq!(parse_item("7"), Ok(item(7, 7, 1)));
        assert_eq!(parse_item("10-20"), Ok(item(10, 20, 1)));
        assert_eq!(parse_item("3:2"), Ok(item(3, 3, 2)));
        assert_eq!(parse_item("5-5:9"), Ok(item(5, 5, 9)));
        assert_eq!(
            parse_item("0-4294967295:4294967295"),
            Ok(item(0, u32::MAX, u32::MAX))
        );
        let problem = |t| parse_item(t).expect_err(t).problem;
        for t in [
            "4-x", "x", "4-", "-", ":", "3:", ":3", "1-2-3", "3:2:1", "3::2", "1 ", "a-b", "+1",
        ] {
            assert_eq!(problem(t), Problem::Syntax, "{t}");
        }
        for t in ["-5", "-5:2", "5--3", "3:-2", "-5-7"] {
            assert_eq!(problem(t), Problem::Negative, "{t}");
        }
        for t in ["4294967296", "1-4294967296", "1:4294967296"] {
            assert_eq!(problem(t), Problem::TooLarge, "{t}");
        }
        assert_eq!(problem("20-10"), Problem::LoAboveHi);
        assert_eq!(problem("3:0"), Problem::ZeroWeight);
        assert_eq!(problem("1-3:0"), Problem::ZeroWeight);
    }

    #[test]
    fn item_messages() {
        let msg = |t| parse_item(t).expect_err(t).to_string();
        assert_eq!(
            msg("4-x"),
            r#"bad item "4-x": expected KW, LO-HI, optionally :WEIGHT with unsigned 32-bit integers"#
        );
        assert_eq!(
            msg("20-10"),
            r#"bad item "20-10": expected LO <= HI in LO-HI"#
        );
        assert_eq!(
            msg("3:0"),
            r#"bad item "3:0": expected a weight of at least 1 in :WEIGHT"#
        );
        assert!(msg("-5").contains("negative"));
    }

    #[test]
    fn query_lines() {
        assert_eq!(parse_query_line(""), Ok(Query::default()));
        assert_eq!(parse_query_line("  \t "), Ok(Query::default()));
        assert_eq!(
            parse_query_line("7 10-20 3:2").expect("valid").items,
            [item(7, 7, 1), item(10, 20, 1), item(3, 3, 2)]
        );
        let e = parse_query_line("1 4-x 2").expect_err("bad");
        assert_eq!(e.token, "4-x");
        assert_eq!(e.kind, TokenKind::Item);
    }

    #[test]
    fn the_plain_keyword_path_parses_as_the_grammar_does() {
        let tokens = [
            "0",
            "7",
            "0123",
            "4294967295",
            "4294967296",
            "99999999999",
            "00000000001",
            "",
            "+5",
            "-5",
            "5-",
            "1-2",
            "3:2",
            "1-2:3",
            "x",
            "12a",
            "٣",
            "1\u{0}",
            " 1",
        ];
        for t in tokens {
            assert_eq!(parse_item(t), parse_any_item(t), "{t:?}");
        }
        // every token of digits up to 11 long, by a stride; parse_u32 as the standard parse
        let mut v = 1u64;
        while v < 100_000_000_000 {
            for t in [v.to_string(), format!("0{v}"), (v - 1).to_string()] {
                assert_eq!(parse_item(&t), parse_any_item(&t), "{t:?}");
                let want = t.parse::<u32>().map_err(|_| Problem::TooLarge);
                assert_eq!(parse_u32(&t), want, "{t:?}");
                assert_eq!(parse_u32(&format!("{t}x")), Err(Problem::Syntax), "{t:?}x");
                assert_eq!(
                    parse_u32(&format!("-{t}")),
                    Err(Problem::Negative),
                    "-{t:?}"
                );
            }
            v = v * 7 + 3;
        }
        // a line's tokens: ASCII whitespace where the line is ASCII without vertical tabs,
        // Unicode whitespace elsewhere (a vertical tab and a no-break space separate too)
        assert_eq!(
            parse_query_line("1\t2\x0b3\u{a0}4 \x0c5")
                .expect("valid")
                .items,
            [
                item(1, 1, 1),
                item(2, 2, 1),
                item(3, 3, 1),
                item(4, 4, 1),
                item(5, 5, 1)
            ]
        );
        assert_eq!(
            parse_query_line("1\x0b2").expect("valid").items,
            [item(1, 1, 1), item(2, 2, 1)]
        );
    }

    #[test]
    fn lines_and_terminators() {
        let mut r = reader(b"1 2\r\n\n3\n4");
        assert_eq!(r.next_line().expect("line 1"), Some("1 2"));
        assert_eq!(r.next_line().expect("line 2"), Some(""));
        assert_eq!(r.next_line().expect("line 3"), Some("3"));
        assert_eq!(r.next_line().expect("line 4"), Some("4"));
        assert_eq!(r.lines_read(), 4);
        assert_eq!(r.bytes_read(), 9);
        assert_eq!(r.next_line().expect("end"), None);
        assert_eq!(r.lines_read(), 4);
    }

    #[test]
    fn objects_with_errors() {
        let mut r = reader(b"1 2\n\n3 x\n");
        let mut kws = Vec::new();
        assert!(r.next_object(&mut kws).expect("object 0"));
        assert_eq!(kws, [1, 2]);
        assert!(r.next_object(&mut kws).expect("object 1"));
        assert!(kws.is_empty());
        let e = r.next_object(&mut kws).expect_err("object 2");
        assert_eq!(
            e.to_string(),
            r#"q.txt:3: bad keyword "x": expected an unsigned 32-bit integer"#
        );
    }

    #[test]
    fn queries_with_errors() {
        let mut r = reader(b"7 10-20 3:2\n\n4-x\n");
        let q = r.next_query().expect("query 0").expect("a line");
        assert_eq!(q, parse_query_line("7 10-20 3:2").expect("valid"));
        assert!(r
            .next_query()
            .expect("query 1")
            .expect("a line")
            .items
            .is_empty());
        let e = r.next_query().expect_err("query 2");
        assert!(e.to_string().starts_with("q.txt:3: "), "{e}");
        assert!(r.next_query().expect("the end").is_none());
    }

    #[test]
    fn not_utf8() {
        let mut r = reader(b"1\n2 \xff3\n");
        assert!(r.next_line().expect("line 1").is_some());
        let e = r.next_line().expect_err("line 2");
        assert_eq!(
            e.to_string(),
            "q.txt:2: line is not valid UTF-8 (invalid byte at column 3)"
        );
    }

    #[test]
    fn blocks_of_lines_keep_their_places() {
        // CRLF and LF ends, an empty line, a last line without its end, a line not UTF-8
        let mut r = reader(b"1 2\r\n\n3\n4 \xff\n5");
        let first = r.next_block(3).expect("block 1");
        assert_eq!(first.len(), 3);
        let lines: Vec<&str> = (0..3).map(|i| first.line(i).expect("text")).collect();
        assert_eq!(lines, ["1 2", "", "3"]);
        assert_eq!(first.place(2), "q.txt:3");
        let second = r.next_block(3).expect("block 2");
        assert_eq!((second.len(), second.place(1)), (2, "q.txt:5".to_string()));
        let e = second.line(0).expect_err("line 4");
        assert_eq!(
            e.to_string(),
            "q.txt:4: line is not valid UTF-8 (invalid byte at column 3)"
        );
        assert_eq!(second.line(1).expect("line 5"), "5");
        assert_eq!((r.lines_read(), r.bytes_read()), (5, 13));
        assert!(r.next_block(3).expect("the end").is_empty());
    }

    #[test]
    fn missing_file() {
        let e = LineReader::open(Path::new("/nonexistent/objects.txt")).expect_err("missing");
        assert!(
            e.to_string()
                .starts_with("/nonexistent/objects.txt: cannot open:"),
            "{e}"
        );
    }
}

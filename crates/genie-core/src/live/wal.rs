//! The write-ahead log: an append-only file of [`Record`]s, each with a sequence number.
//!
//! # Format
//!
//! A 12-byte header, [`MAGIC`] then the format [`VERSION`] (u32 LE), then frames:
//! `[payload length u32 LE][CRC-32 of the payload u32 LE][payload]`, the payload being
//! `[tag u8][sequence u64 LE][id u64 LE]` and, for an upsert, the object's bytes. A payload is at
//! most [`MAX_PAYLOAD`] bytes. Sequence numbers start at 1 and are consecutive.
//!
//! # Guarantees
//!
//! - [`Wal::append`] returns once its records are on disk (`sync_data`). Appends of many threads
//!   share syncs: each writes its frames under a lock, then the first to find no sync running
//!   syncs everything written so far for all of them (group commit).
//! - [`Wal::open`] replays every record in order. A torn tail, the last frame cut short or with a
//!   checksum that does not match and no valid frame after it (what a crash during an append
//!   leaves), is dropped: the file is truncated to the last good frame, with a warning. A bad
//!   frame with a valid frame after it is corruption: an error naming the byte offset, and the
//!   file is left as it is.
//! - A failed write or sync fails the append, truncates the file back to its last durable frame
//!   (best effort) and makes every later append fail until the log is reopened.
//!
//! One process at a time may have a log open.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::error::{GenieError, Result};

/// The first bytes of a log file.
pub const MAGIC: [u8; 8] = *b"GENIEWAL";
/// The format version after the magic.
pub const VERSION: u32 = 1;
/// Bytes of the header: the magic and the version.
pub const HEADER_LEN: u64 = 12;
/// The largest payload of a frame (the tag, sequence number and id included): 64 MiB.
pub const MAX_PAYLOAD: usize = 64 << 20;
/// Bytes before a frame's payload: its length and its checksum.
const FRAME_HEAD: usize = 8;
/// Bytes of a payload before an upsert's object: tag, sequence number, id.
const PAYLOAD_HEAD: usize = 17;
const TAG_UPSERT: u8 = 1;
const TAG_DELETE: u8 = 2;

/// One change of a live index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// The object of this id is added, or replaces the one of this id.
    Upsert {
        /// The object's id.
        id: u64,
        /// The object, encoded by the caller (opaque to the log).
        object: Vec<u8>,
    },
    /// The object of this id is removed.
    Delete {
        /// The object's id.
        id: u64,
    },
}

impl Record {
    fn payload_len(&self) -> usize {
        match self {
            Record::Upsert { object, .. } => PAYLOAD_HEAD + object.len(),
            Record::Delete { .. } => PAYLOAD_HEAD,
        }
    }

    /// Appends this record's frame, with sequence number `seq`, to `out`.
    fn encode(&self, seq: u64, out: &mut Vec<u8>) {
        let (tag, id, object): (u8, u64, &[u8]) = match self {
            Record::Upsert { id, object } => (TAG_UPSERT, *id, object),
            Record::Delete { id } => (TAG_DELETE, *id, &[]),
        };
        // the payload length was checked against MAX_PAYLOAD, so it fits a u32
        let len = self.payload_len() as u32;
        let start = out.len();
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.push(tag);
        out.extend_from_slice(&seq.to_le_bytes());
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(object);
        let crc = crc32fast::hash(&out[start + FRAME_HEAD..]);
        out[start + 4..start + FRAME_HEAD].copy_from_slice(&crc.to_le_bytes());
    }
}

/// A frame read at some offset: its record, sequence number and whole length.
struct Frame {
    seq: u64,
    record: Record,
    len: usize,
}

/// Why no frame could be read at an offset.
enum Bad {
    /// The frame runs past the end of the file.
    Short,
    /// The frame is whole but invalid (checksum, tag, length).
    Invalid(&'static str),
}

/// Reads the frame at the start of `bytes`.
fn read_frame(bytes: &[u8]) -> std::result::Result<Frame, Bad> {
    let Some(head) = bytes.get(..FRAME_HEAD) else {
        return Err(Bad::Short);
    };
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    let crc = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if len > MAX_PAYLOAD {
        return Err(Bad::Invalid("payload length over the maximum"));
    }
    let Some(payload) = bytes.get(FRAME_HEAD..FRAME_HEAD + len) else {
        return Err(Bad::Short);
    };
    if len < PAYLOAD_HEAD {
        return Err(Bad::Invalid("payload shorter than a record's header"));
    }
    if crc32fast::hash(payload) != crc {
        return Err(Bad::Invalid("checksum mismatch"));
    }
    let word = |at: usize| {
        let mut b = [0; 8];
        b.copy_from_slice(&payload[at..at + 8]);
        u64::from_le_bytes(b)
    };
    let (seq, id) = (word(1), word(9));
    let record = match payload[0] {
        TAG_UPSERT => Record::Upsert {
            id,
            object: payload[PAYLOAD_HEAD..].to_vec(),
        },
        TAG_DELETE if len == PAYLOAD_HEAD => Record::Delete { id },
        TAG_DELETE => return Err(Bad::Invalid("delete record with trailing bytes")),
        _ => return Err(Bad::Invalid("unknown record tag")),
    };
    Ok(Frame {
        seq,
        record,
        len: FRAME_HEAD + len,
    })
}

/// The offset of a valid frame after a bad one at `bad`, with a sequence number above `last_seq`,
/// if there is one (then the bad frame is corruption, not a torn tail).
fn valid_frame_after(bytes: &[u8], bad: usize, last_seq: u64) -> Option<usize> {
    (bad + 1..bytes.len().saturating_sub(FRAME_HEAD + PAYLOAD_HEAD - 1))
        .find(|&at| matches!(read_frame(&bytes[at..]), Ok(frame) if frame.seq > last_seq))
}

fn header() -> [u8; HEADER_LEN as usize] {
    let mut h = [0; HEADER_LEN as usize];
    h[..8].copy_from_slice(&MAGIC);
    h[8..].copy_from_slice(&VERSION.to_le_bytes());
    h
}

/// The mutable state of a log, under its lock.
struct State {
    /// The sequence number of the next record appended.
    next_seq: u64,
    /// The end of the frames written (the file's length, unless a write failed).
    written: u64,
    /// The end of the frames known to be on disk.
    durable: u64,
    /// A sync is running (by a writer that released the lock meanwhile).
    syncing: bool,
    /// Why the log refuses appends, after a failed write or sync.
    failed: Option<String>,
    /// Frames being encoded (kept to reuse its allocation).
    buf: Vec<u8>,
}

/// A write-ahead log open for appending; `Send + Sync`, shared by reference or `Arc`.
pub struct Wal {
    path: PathBuf,
    file: File,
    state: Mutex<State>,
    synced: Condvar,
    syncs: AtomicU64,
}

impl std::fmt::Debug for Wal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wal")
            .field("path", &self.path)
            .field("syncs", &self.syncs())
            .finish_non_exhaustive()
    }
}

impl Wal {
    /// Opens the log at `path`, creating it (header written and synced, with its directory) if
    /// it does not exist; returns it with every record it holds, in order, with its sequence
    /// number. A torn tail is truncated away (see the module's documentation).
    pub fn open(path: impl AsRef<Path>) -> Result<(Wal, Vec<(u64, Record)>)> {
        let path = path.as_ref().to_path_buf();
        let io = |error| GenieError::Io {
            path: path.clone(),
            error,
        };
        let bad = |reason: String| GenieError::Log {
            path: path.clone(),
            reason,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        // one writer at a time: the lock is held as long as this handle is open
        if !lock_exclusive(&file).map_err(io)? {
            return Err(bad(
                "the log is open elsewhere (another process or handle holds its lock)".into(),
            ));
        }
        let bytes = std::fs::read(&path).map_err(io)?;
        let header = header();
        if bytes.len() < header.len() {
            if !header.starts_with(&bytes) {
                return Err(bad(format!(
                    "not a write-ahead log ({} bytes, not a log header)",
                    bytes.len()
                )));
            }
            if !bytes.is_empty() {
                log::warn!(
                    "{}: a log header cut short ({} bytes), written again",
                    path.display(),
                    bytes.len()
                );
            }
            file.set_len(0).map_err(io)?;
            file.seek(SeekFrom::Start(0)).map_err(io)?;
            file.write_all(&header).map_err(io)?;
            file.sync_all().map_err(io)?;
            sync_dir(&path).map_err(io)?;
            return Ok((Wal::new(path, file, 1, HEADER_LEN), Vec::new()));
        }
        if bytes[..8] != MAGIC {
            return Err(bad("not a write-ahead log (another magic)".into()));
        }
        let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if version != VERSION {
            return Err(bad(format!(
                "write-ahead log format version {version}, this build reads version {VERSION}"
            )));
        }
        let mut records = Vec::new();
        let mut at = HEADER_LEN as usize;
        let mut last_seq = 0;
        while at < bytes.len() {
            match read_frame(&bytes[at..]) {
                Ok(frame) => {
                    if frame.seq != last_seq + 1 {
                        return Err(bad(format!(
                            "corrupt write-ahead log: frame at byte {at} has sequence number {}, \
                             expected {}",
                            frame.seq,
                            last_seq + 1
                        )));
                    }
                    last_seq = frame.seq;
                    records.push((frame.seq, frame.record));
                    at += frame.len;
                }
                Err(why) => {
                    if let Some(next) = valid_frame_after(&bytes, at, last_seq) {
                        let why = match why {
                            Bad::Short => "length past the end of the file",
                            Bad::Invalid(why) => why,
                        };
                        return Err(bad(format!(
                            "corrupt write-ahead log: bad frame at byte {at} ({why}) with a \
                             valid frame after it at byte {next}"
                        )));
                    }
                    log::warn!(
                        "{}: torn tail dropped: {} bytes from byte {at} (the last {} records \
                         kept)",
                        path.display(),
                        bytes.len() - at,
                        records.len()
                    );
                    file.set_len(at as u64).map_err(io)?;
                    file.sync_all().map_err(io)?;
                    break;
                }
            }
        }
        file.seek(SeekFrom::Start(at as u64)).map_err(io)?;
        Ok((Wal::new(path, file, last_seq + 1, at as u64), records))
    }

    fn new(path: PathBuf, file: File, next_seq: u64, end: u64) -> Wal {
        Wal {
            path,
            file,
            state: Mutex::new(State {
                next_seq,
                written: end,
                durable: end,
                syncing: false,
                failed: None,
                buf: Vec::new(),
            }),
            synced: Condvar::new(),
            syncs: AtomicU64::new(0),
        }
    }

    /// This log writing to `file` instead (a file that fails its writes, for tests).
    #[cfg(test)]
    pub(crate) fn with_file(mut self, file: File) -> Wal {
        self.file = file;
        self
    }

    /// The log's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The disk syncs of appends since the log was opened.
    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }

    /// The sequence number the next record appended will get.
    pub fn next_seq(&self) -> u64 {
        self.lock().next_seq
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // the state is consistent at every unlock, so a panic elsewhere leaves it usable
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn error(&self, reason: String) -> GenieError {
        GenieError::Log {
            path: self.path.clone(),
            reason,
        }
    }

    /// Appends `records` and returns their sequence numbers once they are on disk. Many threads
    /// may append at once; their syncs are shared. On a failed write or sync, the error is
    /// returned and the log refuses every later append until it is reopened.
    pub fn append(&self, records: &[Record]) -> Result<Range<u64>> {
        for r in records {
            if r.payload_len() > MAX_PAYLOAD {
                let id = match r {
                    Record::Upsert { id, .. } | Record::Delete { id } => id,
                };
                return Err(self.error(format!(
                    "record of id {id} refused: {} bytes, over the maximum of {MAX_PAYLOAD}",
                    r.payload_len()
                )));
            }
        }
        let mut st = self.lock();
        if let Some(why) = &st.failed {
            return Err(self.refused(why));
        }
        let first = st.next_seq;
        if records.is_empty() {
            return Ok(first..first);
        }
        let mut buf = std::mem::take(&mut st.buf);
        buf.clear();
        for (seq, r) in (first..).zip(records) {
            r.encode(seq, &mut buf);
        }
        let written = (&self.file).write_all(&buf);
        let len = buf.len() as u64;
        st.buf = buf;
        if let Err(error) = written {
            st.failed = Some(format!("a write failed: {error}"));
            self.truncate_if_idle(&mut st);
            self.synced.notify_all();
            return Err(GenieError::Io {
                path: self.path.clone(),
                error,
            });
        }
        st.written += len;
        st.next_seq += records.len() as u64;
        let end = st.written;
        let range = first..st.next_seq;
        loop {
            if st.durable >= end {
                return Ok(range);
            }
            if let Some(why) = &st.failed {
                return Err(self.refused(why));
            }
            if st.syncing {
                st = self.synced.wait(st).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            // lead: sync everything written so far, for every writer waiting
            st.syncing = true;
            let target = st.written;
            drop(st);
            let synced = self.file.sync_data();
            st = self.lock();
            st.syncing = false;
            match synced {
                Ok(()) => {
                    self.syncs.fetch_add(1, Ordering::Relaxed);
                    st.durable = st.durable.max(target);
                    // a write that failed during the sync left its truncation to this writer
                    if st.failed.is_some() {
                        self.truncate_if_idle(&mut st);
                    }
                }
                Err(error) => {
                    st.failed = Some(format!("a sync failed: {error}"));
                    self.truncate_if_idle(&mut st);
                    self.synced.notify_all();
                    return Err(GenieError::Io {
                        path: self.path.clone(),
                        error,
                    });
                }
            }
            self.synced.notify_all();
        }
    }

    fn refused(&self, why: &str) -> GenieError {
        self.error(format!(
            "the log refuses appends since {why}; reopen it to go on"
        ))
    }

    /// After a failure: cuts the file back to its durable frames, unless a sync is running (its
    /// writer does it when the sync ends). Best effort: the log refuses appends either way.
    fn truncate_if_idle(&self, st: &mut State) {
        if st.syncing {
            return;
        }
        let cut = self
            .file
            .set_len(st.durable)
            .and_then(|()| (&self.file).seek(SeekFrom::Start(st.durable)).map(drop));
        match cut {
            Ok(()) => st.written = st.durable,
            Err(e) => log::warn!(
                "{}: could not truncate the log back to byte {} after a failure: {e}",
                self.path.display(),
                st.durable
            ),
        }
    }
}

/// Takes `file`'s exclusive lock without waiting (`flock`): `Ok(false)` when another open
/// handle holds it. Released when the file is closed (by the kernel, also when a process dies).
#[cfg(target_os = "linux")]
fn lock_exclusive(file: &File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor this handle owns, open for its whole lifetime.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        return Ok(false);
    }
    Err(e)
}

/// Elsewhere the log is not locked (one process at a time is the caller's to ensure).
#[cfg(not(target_os = "linux"))]
fn lock_exclusive(_file: &File) -> std::io::Result<bool> {
    Ok(true)
}

/// Syncs the directory of `path`, so that a file just created there stays after a crash.
#[cfg(unix)]
fn sync_dir(path: &Path) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

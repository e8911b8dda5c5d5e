//! Files written whole or not at all: every file genie writes goes to a temporary file beside its
//! destination and is renamed over it only once complete and flushed to disk. A failed, killed or
//! interrupted write leaves the destination as it was (an earlier index, a user's file), and never
//! a half-written file under the destination's name.
//!
//! No temporary file outlives its process for long. It is named `.NAME.genie-tmp-PID-N`, and:
//! - an uncommitted [`AtomicFile`] removes it when dropped (an error, a panic that unwinds);
//! - a program that catches SIGINT or SIGTERM calls [`abandon_all`] before it exits, which removes
//!   the temporary files of every write still in progress (the `genie` program does);
//! - what a process killed outright leaves (SIGKILL, a power cut) is removed by the next write of
//!   the same destination, once no process of that PID is alive ([`AtomicFile::create`]).
//!
//! On Linux the disk writes while the file is still being written: every [`WRITE_BEHIND`] bytes
//! the kernel is asked to start writing the window just filled (`sync_file_range`), so the sync at
//! [`AtomicFile::commit`] waits for the last window rather than for the whole file, and a large
//! index is saved in about the disk's time rather than the page cache's plus the disk's.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Bytes handed to the kernel between two requests to start write-back, and the most one write
/// call passes at once.
pub const WRITE_BEHIND: usize = 64 << 20;

/// A file being written; it appears under its name only at [`AtomicFile::commit`].
#[derive(Debug)]
pub struct AtomicFile {
    /// The temporary file, or the destination itself when it is written in place.
    tmp: PathBuf,
    /// The destination is a device, a pipe or a socket (`/dev/null`, `/dev/stdout`, a FIFO),
    /// written in place: a rename would replace it with a regular file.
    in_place: bool,
    dest: PathBuf,
    file: Option<BufWriter<File>>,
    /// Bytes accepted so far (some may still be in the buffer).
    written: u64,
    /// Write-back has been started for the bytes before this offset.
    behind: u64,
    window: usize,
}

/// Distinguishes the temporary files of one process.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// The temporary files of the writes in progress; `None` once [`abandon_all`] has run (the
/// process is about to exit, and no write may start).
static PENDING: Mutex<Option<Vec<PathBuf>>> = Mutex::new(Some(Vec::new()));

/// The list of pending temporary files (a panic elsewhere while it was held leaves it usable).
fn pending() -> MutexGuard<'static, Option<Vec<PathBuf>>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// The part of a temporary file's name after the destination's: `.genie-tmp-`.
const TMP_MARK: &str = ".genie-tmp-";

/// Removes the temporary files of every write in progress, and refuses every later
/// [`AtomicFile::create`] and [`AtomicFile::commit`]: for a signal handler, just before the
/// process exits (the destinations stay as they were). Returns how many files it removed.
pub fn abandon_all() -> usize {
    let mut guard = pending();
    let files = guard.take().unwrap_or_default();
    files
        .iter()
        .filter(|tmp| std::fs::remove_file(tmp).is_ok())
        .count()
}

/// The error of a write started or finished after [`abandon_all`].
fn abandoned() -> io::Error {
    io::Error::new(
        io::ErrorKind::Interrupted,
        "interrupted: the program is exiting",
    )
}

/// Whether a process of this id is alive (an unknown answer counts as alive).
#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true
}

/// Removes the temporary files of `dest` that a process no longer alive left behind (killed
/// while writing it); returns how many. Errors are ignored: this is housekeeping.
pub fn remove_stale(dest: &Path) -> usize {
    let (Some(name), Some(dir)) = (dest.file_name(), dest.parent()) else {
        return 0;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(TMP_MARK);
    let Some(prefix) = prefix.to_str() else {
        return 0;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let ours = std::process::id();
    let mut removed = 0;
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
            continue;
        };
        // PID-N, both decimal
        let Some((pid, n)) = rest.split_once('-') else {
            continue;
        };
        let (Ok(pid), true) = (pid.parse::<u32>(), n.bytes().all(|b| b.is_ascii_digit())) else {
            continue;
        };
        if pid != ours && !process_alive(pid) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

impl AtomicFile {
    /// Starts writing `dest` (through a temporary file in the same directory). Temporary files
    /// of `dest` that a killed process left behind are removed first. A `dest` that is a device,
    /// a pipe or a socket (`/dev/null`, a FIFO) is written in place instead: renaming a file over
    /// it would replace it (`genie search --output /dev/null`, run as root, had replaced the
    /// machine's `/dev/null` with a regular file).
    pub fn create(dest: &Path) -> io::Result<Self> {
        let in_place = std::fs::metadata(dest).is_ok_and(|m| !m.is_file() && !m.is_dir());
        let (tmp, file) = if in_place {
            let file = std::fs::OpenOptions::new().write(true).open(dest)?;
            (dest.to_path_buf(), file)
        } else {
            Self::temporary(dest)?
        };
        Ok(Self {
            tmp,
            in_place,
            dest: dest.to_path_buf(),
            file: Some(BufWriter::with_capacity(1 << 16, file)),
            written: 0,
            behind: 0,
            window: WRITE_BEHIND,
        })
    }

    /// A new temporary file beside `dest`, registered as pending (the stale ones of `dest`
    /// removed first).
    fn temporary(dest: &Path) -> io::Result<(PathBuf, File)> {
        let name = dest
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
        let stale = remove_stale(dest);
        if stale > 0 {
            log::info!(
                "removed {stale} temporary file(s) of {} left by an interrupted run",
                dest.display()
            );
        }
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(
            "{TMP_MARK}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let tmp = dest.with_file_name(tmp_name);
        // registered while the lock is held, so that abandon_all sees every file created
        let mut guard = pending();
        let list = guard.as_mut().ok_or_else(abandoned)?;
        let file = File::create(&tmp)?;
        list.push(tmp.clone());
        Ok((tmp, file))
    }

    /// Starts write-back of the bytes in the kernel's hands since the last start, once they make
    /// a window.
    fn write_behind(&mut self) -> io::Result<()> {
        let Some(w) = self.file.as_ref() else {
            return Ok(());
        };
        let in_file = self.written - w.buffer().len() as u64;
        if in_file - self.behind < self.window as u64 {
            return Ok(());
        }
        start_write_back(w.get_ref(), self.behind, in_file - self.behind)?;
        self.behind = in_file;
        Ok(())
    }

    /// Flushes the file to disk and renames it over the destination.
    pub fn commit(mut self) -> io::Result<()> {
        let writer = self
            .file
            .take()
            .ok_or_else(|| io::Error::other("already committed"))?;
        let file = writer
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        if self.in_place {
            // a device or a pipe: what it was given is all it takes
            return Ok(());
        }
        file.sync_all()?;
        drop(file);
        let mut guard = pending();
        let list = guard.as_mut().ok_or_else(abandoned)?;
        list.retain(|p| p != &self.tmp);
        let renamed = std::fs::rename(&self.tmp, &self.dest);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        renamed
    }

    /// Overwrites `bytes` at `at`, inside what was already written (a header whose checksums are
    /// known only once the rest is written); later writes go on at the end. Write-back of the
    /// rewritten bytes is left to the sync at [`AtomicFile::commit`].
    pub fn write_at(&mut self, at: u64, bytes: &[u8]) -> io::Result<()> {
        let end = self.written;
        if at.checked_add(bytes.len() as u64).is_none_or(|e| e > end) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a rewrite of {} bytes at {at} reaches past the {end} bytes written",
                    bytes.len()
                ),
            ));
        }
        let file = self.writer()?;
        file.flush()?;
        let file = file.get_mut();
        file.seek(SeekFrom::Start(at))?;
        file.write_all(bytes)?;
        file.seek(SeekFrom::Start(end))?;
        Ok(())
    }

    fn writer(&mut self) -> io::Result<&mut BufWriter<File>> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("already committed"))
    }
}

/// Asks the kernel to start writing `len` bytes of `file` from `at` to the disk, without waiting.
#[cfg(target_os = "linux")]
fn start_write_back(file: &File, at: u64, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(at), Ok(len)) = (libc::off64_t::try_from(at), libc::off64_t::try_from(len)) else {
        return Ok(());
    };
    // SAFETY: a plain system call on an open descriptor; it reads no memory of ours.
    let r =
        unsafe { libc::sync_file_range(file.as_raw_fd(), at, len, libc::SYNC_FILE_RANGE_WRITE) };
    if r == 0 {
        return Ok(());
    }
    match io::Error::last_os_error() {
        // a file system without it: the sync at the commit does the whole work
        e if matches!(
            e.raw_os_error(),
            Some(libc::ENOSYS | libc::EINVAL | libc::ESPIPE)
        ) =>
        {
            Ok(())
        }
        e => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn start_write_back(_file: &File, _at: u64, _len: u64) -> io::Result<()> {
    Ok(())
}

impl Write for AtomicFile {
    /// Passes at most a window at once, so that write-back starts as each window is filled.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let cap = buf.len().min(self.window);
        let n = self.writer()?.write(&buf[..cap])?;
        self.written += n as u64;
        self.write_behind()?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer()?.flush()
    }
}

impl Drop for AtomicFile {
    /// Not committed: the temporary file goes, the destination stays as it was.
    fn drop(&mut self) {
        if self.file.take().is_some() && !self.in_place {
            let mut guard = pending();
            if let Some(list) = guard.as_mut() {
                list.retain(|p| p != &self.tmp);
            }
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `dest` whole or not at all.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(dest)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_or_not_at_all() {
        let dir = std::env::temp_dir().join(format!("genie-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let dest = dir.join("out.txt");
        std::fs::write(&dest, b"old").expect("write");
        {
            let mut f = AtomicFile::create(&dest).expect("create");
            f.write_all(b"new but unfinished").expect("write");
            // dropped without commit: a failed write
        }
        assert_eq!(std::fs::read(&dest).expect("read"), b"old");
        write_atomic(&dest, b"new").expect("write");
        assert_eq!(std::fs::read(&dest).expect("read"), b"new");
        let left: Vec<_> = std::fs::read_dir(&dir).expect("list").collect();
        assert_eq!(left.len(), 1, "no temporary file stays behind");
        std::fs::remove_dir_all(&dir).expect("clean");
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_written_in_place_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = std::env::temp_dir().join(format!("genie-atomic-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let fifo = dir.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: mkfifo is not available here");
            return;
        }
        for commit in [true, false] {
            use std::io::Read;
            use std::os::unix::fs::OpenOptionsExt;
            // the reading end opened first, without waiting for a writer; the bytes fit the
            // pipe's buffer, so nothing here waits for anything
            let mut reader = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&fifo)
                .expect("open the reading end");
            let mut f = AtomicFile::create(&fifo).expect("open the pipe");
            f.write_all(b"through the pipe").expect("write");
            if commit {
                f.commit().expect("commit");
            } else {
                drop(f);
            }
            let mut got = Vec::new();
            reader.read_to_end(&mut got).expect("read the pipe");
            // a pipe, as standard output, gets what was written (all of it once committed); it
            // is still a pipe, not a file renamed over it
            assert!(b"through the pipe".starts_with(&got), "{got:?}");
            if commit {
                assert_eq!(got, b"through the pipe");
            }
            let kind = std::fs::metadata(&fifo).expect("still there").file_type();
            assert!(kind.is_fifo(), "{kind:?}");
        }
        let left: Vec<_> = std::fs::read_dir(&dir).expect("list").collect();
        assert_eq!(left.len(), 1, "no temporary file beside the pipe");
        std::fs::remove_dir_all(&dir).expect("clean");
    }

    #[test]
    fn windows_of_write_behind_keep_every_byte() {
        let dir = tempfile::tempdir().expect("dir");
        let dest = dir.path().join("big.bin");
        let bytes: Vec<u8> = (0..1_000_003u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut f = AtomicFile::create(&dest).expect("create");
        f.window = 4096;
        // one large write, then small ones that the buffer holds
        f.write_all(&bytes[..900_000]).expect("write");
        for piece in bytes[900_000..].chunks(777) {
            f.write_all(piece).expect("write");
        }
        assert!(
            f.behind >= 900_000 - 4096,
            "write-back started as windows filled"
        );
        assert!(f.behind <= f.written);
        f.commit().expect("commit");
        assert_eq!(std::fs::read(&dest).expect("read"), bytes);
    }

    #[test]
    fn what_a_dead_process_left_is_removed_by_the_next_write() {
        let dir = tempfile::tempdir().expect("dir");
        let dest = dir.path().join("idx.genie");
        // a process that has exited: its id is free (or reused by a live one, then kept)
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        let ours = std::process::id();
        let left = [
            format!(".idx.genie.genie-tmp-{dead}-0"),
            format!(".idx.genie.genie-tmp-{dead}-17"),
        ];
        let kept = [
            format!(".idx.genie.genie-tmp-{ours}-999"), // this process's, maybe in progress
            ".idx.genie.genie-tmp-1-0".to_string(),     // pid 1 is alive
            format!(".other.genie.genie-tmp-{dead}-0"), // another destination's
            format!(".idx.genie.genie-tmp-{dead}-x"),   // not a name of ours
            "idx.genie.bak".to_string(),
        ];
        for name in left.iter().chain(&kept) {
            std::fs::write(dir.path().join(name), b"half").expect("write");
        }
        let alive = process_alive(dead);
        write_atomic(&dest, b"new").expect("write");
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut want: Vec<String> = kept.to_vec();
        want.push("idx.genie".into());
        if alive {
            want.extend(left.iter().cloned());
        }
        want.sort();
        assert_eq!(names, want);
        assert!(process_alive(ours));
    }

    #[test]
    fn a_rewrite_in_place_keeps_the_rest() {
        let dir = tempfile::tempdir().expect("dir");
        let dest = dir.path().join("head.bin");
        let mut f = AtomicFile::create(&dest).expect("create");
        f.write_all(&[0; 8]).expect("write");
        f.write_all(b"body").expect("write");
        f.write_at(2, b"HEAD").expect("rewrite");
        assert!(f.write_at(10, b"past").is_err(), "past the end");
        assert!(f.write_at(u64::MAX, b"x").is_err(), "overflow");
        f.write_all(b"!").expect("write after the rewrite");
        f.commit().expect("commit");
        assert_eq!(std::fs::read(&dest).expect("read"), b"\0\0HEAD\0\0body!");
    }
}

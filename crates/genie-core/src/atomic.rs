//! Files written whole or not at all: every file genie writes goes to a temporary file beside its
//! destination and is renamed over it only once complete and flushed to disk. A failed, killed or
//! interrupted write leaves the destination as it was (an earlier index, a user's file), and never
//! a half-written file under the destination's name. A temporary file a killed process leaves is
//! named `.NAME.genie-tmp-PID-N`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A file being written; it appears under its name only at [`AtomicFile::commit`].
#[derive(Debug)]
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    file: Option<BufWriter<File>>,
}

/// Distinguishes the temporary files of one process.
static NEXT: AtomicU64 = AtomicU64::new(0);

impl AtomicFile {
    /// Starts writing `dest` (through a temporary file in the same directory).
    pub fn create(dest: &Path) -> io::Result<Self> {
        let name = dest
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(
            ".genie-tmp-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let tmp = dest.with_file_name(tmp_name);
        let file = File::create(&tmp)?;
        Ok(Self {
            tmp,
            dest: dest.to_path_buf(),
            file: Some(BufWriter::with_capacity(1 << 16, file)),
        })
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
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.tmp, &self.dest)
    }

    fn writer(&mut self) -> io::Result<&mut BufWriter<File>> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("already committed"))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer()?.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer()?.flush()
    }
}

impl Drop for AtomicFile {
    /// Not committed: the temporary file goes, the destination stays as it was.
    fn drop(&mut self) {
        if self.file.take().is_some() {
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
}

//! Never destroy a user's data: before anything is written, an output that is the same file as
//! an input (the objects or queries file, an index or one of its side files), through the same
//! name, a link or another path, is refused. The writes themselves are whole or not at all
//! ([`genie_core::atomic`]).

use crate::data_error::DataError;
use crate::input::{display_path, STDIN_PATH};
use std::path::{Path, PathBuf};

/// A file read, and what it is to the command (for the message).
pub type Read<'a> = (&'a Path, &'a str);

/// An error when one of `writes` is the same file as one of `reads`. Files that do not exist
/// yet cannot be the same; `-` (standard input or output) is never a file here.
pub fn refuse_overwrite(writes: &[PathBuf], reads: &[Read<'_>]) -> Result<(), DataError> {
    for w in writes
        .iter()
        .filter(|w| w.as_os_str() != STDIN_PATH && w.exists())
    {
        for (r, what) in reads.iter().filter(|(r, _)| r.as_os_str() != STDIN_PATH) {
            if same_file::is_same_file(w, r).unwrap_or(false) {
                return Err(DataError::File {
                    path: w.clone(),
                    message: format!(
                        "is the same file as {what} {}: refusing to write over it (choose another output)",
                        display_path(r)
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The first bytes of every index file `genie build` writes (single files and parts).
const INDEX_MAGIC: &[u8; 8] = b"GENIEIDX";

/// An error when the input of a build is itself an index file (an easy slip between `--input`
/// and `--output`): it would otherwise be read as data and fail on some byte of it.
pub fn refuse_index_as_input(input: &Path) -> Result<(), DataError> {
    use std::io::Read as _;
    if input.as_os_str() == STDIN_PATH {
        return Ok(());
    }
    let mut head = [0u8; 8];
    let is_index = std::fs::File::open(input)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == INDEX_MAGIC);
    if is_index {
        return Err(DataError::File {
            path: input.to_path_buf(),
            message: "is an index written by genie build, not data to index (give the objects \
                      file as --input; genie search and genie info read an index)"
                .into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_file_by_any_name() {
        let dir = std::env::temp_dir().join(format!("genie-safety-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).expect("dir");
        let input = dir.join("objects.txt");
        std::fs::write(&input, "1 2\n").expect("write");
        let other = dir.join("sub/../objects.txt");
        let e = refuse_overwrite(std::slice::from_ref(&other), &[(&input, "the input")])
            .expect_err("same");
        assert!(
            e.to_string().contains("is the same file as the input"),
            "{e}"
        );
        #[cfg(unix)]
        {
            let link = dir.join("link.genie");
            std::os::unix::fs::symlink(&input, &link).expect("link");
            assert!(refuse_overwrite(&[link], &[(&input, "the input")]).is_err());
        }
        let fresh = dir.join("new.genie");
        assert!(refuse_overwrite(&[fresh], &[(&input, "the input")]).is_ok());
        assert!(refuse_overwrite(&[PathBuf::from("-")], &[(Path::new("-"), "stdin")]).is_ok());
        std::fs::remove_dir_all(&dir).expect("clean");
    }
}

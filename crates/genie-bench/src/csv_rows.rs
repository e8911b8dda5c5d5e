//! Appending rows to a benchmark CSV shared with the peers' scripts: the header written when the
//! file is new, and checked when it is not, so that rows of another schema never mix in.

use anyhow::{ensure, Context, Result};
use std::path::Path;

/// An error unless `path` is missing, empty or starts with `header`; whether it is new.
pub fn check_header(path: &Path, header: &[&str]) -> Result<bool> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let Some(first) = text.lines().next() else {
        return Ok(true);
    };
    ensure!(
        first.trim_end() == header.join(","),
        "{}: the header is {first}, expected {}",
        path.display(),
        header.join(",")
    );
    Ok(false)
}

/// Appends `records` to the CSV at `path`, `header` first when the file is new.
pub fn append_records<R, I, F>(path: &Path, header: &[&str], records: R) -> Result<()>
where
    R: IntoIterator<Item = I>,
    I: IntoIterator<Item = F>,
    F: AsRef<[u8]>,
{
    let new = check_header(path, header)?;
    let ends_open = !new && !std::fs::read(path)?.ends_with(b"\n");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    if ends_open {
        // a last line without its newline would run into the first new row
        std::io::Write::write_all(&mut file, b"\n")?;
    }
    let mut w = csv::Writer::from_writer(file);
    if new {
        w.write_record(header)?;
    }
    for record in records {
        w.write_record(record)?;
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

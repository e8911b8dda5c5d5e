//! `genie add`, `genie delete` and `genie compact`: writes to a live index (a folder, or an
//! index file whose live index `INDEX.live` is made on first use), and the id files of
//! `genie search --filter-ids` and `--exclude-ids`.

use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::kind::Registry;
use crate::live::{LiveConfig, LiveIndex};
use std::sync::Arc;

/// Objects written per call to the live index (one log append each).
const CHUNK: usize = 1 << 16;

/// The live index of `path`: a live index folder, or an index file's `PATH.live`.
pub fn open_live(registry: &Registry, path: &Path) -> Result<Arc<LiveIndex>> {
    let config = LiveConfig {
        background: false,
        ..LiveConfig::default()
    };
    let live = if LiveIndex::is_live(path) {
        LiveIndex::open_with(registry, path, config)
    } else if path.is_file() {
        LiveIndex::open_file(registry, path, config)
    } else {
        bail!(
            "{}: neither a live index folder (with {}) nor an index file",
            path.display(),
            crate::live::MANIFEST
        )
    };
    live.with_context(|| format!("cannot open {} for writing", path.display()))
}

/// Reads ids, one unsigned 64-bit integer per line (blank lines skipped); the error names the
/// file and line.
pub fn read_ids(path: &Path) -> Result<Vec<u64>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot open the ids file {}", path.display()))?;
    let mut ids = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("{}:{}: cannot read", path.display(), i + 1))?;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let id = t.parse::<u64>().with_context(|| {
            format!(
                "{}:{}: expected an id (an unsigned 64-bit integer), found {t:?}",
                path.display(),
                i + 1
            )
        })?;
        ids.push(id);
    }
    Ok(ids)
}

/// `genie add`: the objects of `input` (read as the kind reads its queries: a keyword line, a
/// document line, a table row) with the ids of `ids` (one per line, as many as the objects),
/// else ids from one past the largest in the index on. Nothing is written when an id or an
/// object is wrong. Returns the objects written.
pub fn add(registry: &Registry, index: &Path, input: &Path, ids: Option<&Path>) -> Result<u64> {
    let live = open_live(registry, index)?;
    let kind = Arc::clone(registry.get(live.kind())?);
    let open = || {
        kind.read_queries(input, &crate::kind::Options::new())
            .with_context(|| format!("cannot open the objects file {}", input.display()))
    };
    let given = ids.map(read_ids).transpose()?;
    // every object is checked before the first is written
    let mut reader = open()?;
    let mut count = 0usize;
    while let Some(raw) = reader.next_query()? {
        live.codec()
            .encode(&raw)
            .map_err(|e| anyhow::anyhow!("{}: {e}", reader.location()))?;
        count += 1;
    }
    if let (Some(g), Some(ids_path)) = (&given, ids) {
        if count != g.len() {
            bail!(
                "{} holds {} ids and {} holds {count} objects: expected one id per object",
                ids_path.display(),
                g.len(),
                input.display()
            );
        }
    }
    let mut reader = open()?;
    let mut next = live.next_free_id();
    let mut written = 0u64;
    let mut at = 0usize;
    loop {
        let mut objects = Vec::with_capacity(CHUNK);
        while objects.len() < CHUNK {
            match reader.next_query()? {
                Some(raw) => objects.push(raw),
                None => break,
            }
        }
        if objects.is_empty() {
            break;
        }
        let chunk_ids: Vec<u64> = match &given {
            Some(g) => g
                .get(at..at + objects.len())
                .with_context(|| format!("{}: more objects than ids", input.display()))?
                .to_vec(),
            None => {
                next += objects.len() as u64;
                (next - objects.len() as u64..next).collect()
            }
        };
        at += objects.len();
        written += live.add(&chunk_ids, &objects)?;
    }
    live.flush()?;
    Ok(written)
}

/// `genie delete`: the objects of the ids in `ids`; returns how many there were.
pub fn delete(registry: &Registry, index: &Path, ids: &Path) -> Result<u64> {
    let live = open_live(registry, index)?;
    let ids = read_ids(ids)?;
    let mut gone = 0;
    for chunk in ids.chunks(CHUNK) {
        gone += live.delete(chunk)?;
    }
    live.flush()?;
    Ok(gone)
}

/// `genie compact`: every segment merged into one, deleted objects dropped; returns the live
/// objects.
pub fn compact(registry: &Registry, index: &Path) -> Result<u64> {
    let live = open_live(registry, index)?;
    live.compact()?;
    Ok(live.live_objects())
}

//! Helpers shared by the examples: where the data sets are.
#![allow(dead_code)]

use std::path::PathBuf;

/// The folder of data set `name` (`words`, `titles`, `tweets`, `adult`): `../shared/data/NAME`
/// beside the repository first, then `data/NAME` inside it (filled by `scripts/fetch-data.sh`).
pub fn data_dir(name: &str) -> anyhow::Result<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        root.join("../shared/data").join(name),
        root.join("data").join(name),
    ];
    candidates
        .iter()
        .find(|p| p.is_dir())
        .cloned()
        .ok_or_else(|| {
            anyhow::anyhow!(
                "data set {name:?} not found in ../shared/data or data/: run scripts/fetch-data.sh"
            )
        })
}

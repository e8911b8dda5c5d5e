//! Helpers shared by the examples: where the data sets are.
#![allow(dead_code)]

use std::path::PathBuf;

/// The folder of data set `name` (`words`, `titles`, `tweets`, `adult`): `$GENIE_DATA/NAME` when
/// the environment variable `GENIE_DATA` names a folder of data sets, then `data/NAME` inside the
/// repository (git-ignored, filled by `scripts/fetch-data.sh`).
pub fn data_dir(name: &str) -> anyhow::Result<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut candidates: Vec<PathBuf> = std::env::var_os("GENIE_DATA")
        .map(|d| PathBuf::from(d).join(name))
        .into_iter()
        .collect();
    candidates.push(root.join("data").join(name));
    candidates.into_iter().find(|p| p.is_dir()).ok_or_else(|| {
        anyhow::anyhow!(
            "data set {name:?} not found in $GENIE_DATA or data/: run scripts/fetch-data.sh"
        )
    })
}

//! Where the `genie` binary is, for the CLI tests: `GENIE_BIN`, else cargo's build path, else
//! `../bin/genie` beside the test binary (the layout of a staged copy on another machine).

use std::path::PathBuf;

/// The `genie` binary.
pub fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("GENIE_BIN") {
        return p.into();
    }
    let built = PathBuf::from(env!("CARGO_BIN_EXE_genie"));
    if built.exists() {
        return built;
    }
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(|d| d.parent())
        .map(|d| d.join("bin").join("genie"))
        .unwrap_or(built)
}

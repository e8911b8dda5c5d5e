//! The work of the `genie` program (feature `cli`), apart from its command line: the program
//! parses its arguments, sets up logging and signals and maps errors to exit codes; what each
//! command does is here.
//!
//! - [`flags`]: the flags of the kinds of data, made from the options each kind declares
//!   ([`crate::kind::OptionSpec`]), and the options given on a command line.
//! - [`build`]: `genie build`, a kind's build with its overwrite checks, progress and summary.
//! - [`search`]: `genie search`, here through the batching [`crate::service::Service`] or on a
//!   `genie serve` server, over the [`pipeline`] that reads, searches and writes chunks of
//!   queries at once.
//! - [`serve`]: `genie serve`, the indexes opened and the HTTP server run until a signal.
//! - [`progress`]: the progress bars on standard error.
//! - [`program`]: what every run of the program does around its command (logging, signals, the
//!   exit code) and `genie info`.

pub mod auto;
pub mod build;
pub mod flags;
pub mod live;
pub mod pipeline;
pub mod program;
pub mod progress;
pub mod search;
pub mod serve;

use anyhow::{anyhow, Context, Result};
use genie_core::{DeviceChoice, GenieError, Method};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::data_error::DataError;
use crate::kind::KindIndex;
use crate::open::OpenSpec;

/// Where to search, as asked on the command line.
#[derive(Clone, Debug, Default)]
pub struct Devices {
    /// `--device`; when not given, the GENIE_DEVICE environment variable, else auto.
    pub device: Option<DeviceChoice>,
    /// `--devices`: the GPUs to use (default: all).
    pub devices: Option<Vec<usize>>,
    /// `--parts`: the index split into this many parts.
    pub parts: Option<usize>,
    /// `--method`: how counts are kept.
    pub method: Method,
}

impl Devices {
    /// The placement asked for, and what asked for the device (for error messages).
    fn spec(&self) -> Result<(OpenSpec, String)> {
        let (device, asked_by) = match self.device {
            Some(d) => (d, "--device".to_string()),
            None => (
                DeviceChoice::from_env().context("bad GENIE_DEVICE")?,
                "GENIE_DEVICE".to_string(),
            ),
        };
        let spec = OpenSpec {
            device,
            devices: self.devices.clone(),
            parts: self.parts,
            method: self.method,
        };
        Ok((spec, asked_by))
    }
}

/// The placement's error, with what asked for the GPU when there is none.
fn explain_placement(
    placed: Result<Vec<Arc<dyn KindIndex>>, DataError>,
    asked_by: &str,
) -> Result<Vec<Arc<dyn KindIndex>>> {
    placed.map_err(|e| match e {
        DataError::Core(GenieError::GpuUnavailable(_)) => anyhow!(
            "{e} (the GPU was requested by {asked_by}; use --device cpu or --device auto to \
             search on the CPU)"
        ),
        other => anyhow!(other).context("cannot start the search backend"),
    })
}

/// The part files `INDEX.part0`, `INDEX.part1`, ... that exist.
fn part_files(index: &Path) -> Vec<PathBuf> {
    (0..)
        .map(|i| crate::kind::side_path(index, &format!("part{i}")))
        .take_while(|p| p.exists())
        .collect()
}

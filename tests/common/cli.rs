//! The harness of the CLI tests: a temporary folder in which `genie` runs (as its working
//! directory, so tests name their files relatively), with what the tests ask of a run.

#![allow(dead_code)] // each test file uses its part

use std::path::PathBuf;
use std::process::{Command, Output};
use tempfile::TempDir;

#[path = "bin.rs"]
mod bin;
pub use bin::binary;

/// A temporary folder to run `genie` in.
pub struct Dir(pub TempDir);

impl Default for Dir {
    fn default() -> Self {
        Self::new()
    }
}

impl Dir {
    pub fn new() -> Self {
        Self(tempfile::tempdir().expect("temp dir"))
    }

    /// A file of the folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    /// Writes a file of the folder; its path.
    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).expect("write fixture");
        p
    }

    pub fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path(name)).expect("read")
    }

    /// `genie` in the folder, without the environment that would change its choices.
    pub fn command(&self) -> Command {
        let mut c = Command::new(binary());
        c.current_dir(self.0.path())
            .env_remove("GENIE_DEVICE")
            .env_remove("GENIE_TOKEN")
            .env_remove("RUST_LOG");
        c
    }

    /// Runs `genie ARGS` as given.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("run genie")
    }

    /// Runs `genie --quiet ARGS`.
    pub fn genie(&self, args: &[&str]) -> Output {
        self.command()
            .arg("--quiet")
            .args(args)
            .output()
            .expect("run genie")
    }

    /// `genie search --index INDEX --queries QUERIES --k K EXTRA...`, as given (no `--quiet`, the
    /// device left to `--device` in `extra` or to the default).
    pub fn search(&self, index: &str, queries: &str, k: &str, extra: &[&str]) -> Output {
        let mut args = vec!["search", "--index", index, "--queries", queries, "--k", k];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    /// `genie --quiet search --device cpu --index INDEX --queries QUERIES --k K EXTRA...`.
    pub fn search_cpu(&self, index: &str, queries: &str, k: &str, extra: &[&str]) -> Output {
        let mut args = vec![
            "search",
            "--device",
            "cpu",
            "--index",
            index,
            "--queries",
            queries,
            "--k",
            k,
        ];
        args.extend_from_slice(extra);
        self.genie(&args)
    }

    /// `genie --quiet ARGS` succeeds: its standard output.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.genie(args);
        assert!(
            out.status.success(),
            "genie {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8")
    }

    /// `genie --quiet ARGS` fails with an exit code (not a signal) and without a panic: its
    /// message.
    pub fn fails(&self, args: &[&str]) -> String {
        let out = self.genie(args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "genie {args:?} succeeded");
        assert_ne!(out.status.code(), None, "killed by a signal: {err}");
        assert!(!err.contains("panicked"), "panic: {err}");
        err
    }

    /// The names in the folder, sorted (to see that no temporary file stays behind).
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.0.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

/// The standard output of a run.
pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 stdout")
}

/// The standard error of a run.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts that a run succeeded: its standard output.
pub fn success(out: &Output) -> String {
    assert!(
        out.status.success(),
        "genie failed ({:?}): {}",
        out.status,
        stderr(out)
    );
    stdout(out)
}

/// Asserts that a run failed with an exit code (not a signal) and without a panic: its standard
/// error.
pub fn failure(out: &Output) -> String {
    let err = stderr(out);
    assert!(!out.status.success(), "genie succeeded; stderr: {err}");
    assert_ne!(out.status.code(), None, "killed by a signal: {err}");
    assert!(!err.contains("panicked"), "genie panicked: {err}");
    err
}

/// A [`failure`] whose message says `error`: its standard error.
pub fn error(out: &Output) -> String {
    let err = failure(out);
    assert!(err.contains("error"), "no error message: {err}");
    err
}

/// Reports a skipped test on stderr past the test harness's capture.
pub fn skip(reason: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
}

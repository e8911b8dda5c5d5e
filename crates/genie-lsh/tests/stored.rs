//! What a vector index file records of its kind and family, and the files written before
//! (`"plugin"` instead of `"kind"` and `"family"`), which still open and answer the same.
#![allow(clippy::unwrap_used)]

mod common;

use common::clusters;
use genie_core::{DeviceChoice, InvertedIndex};
use genie_lsh::codebook::index::codebook_path;
use genie_lsh::index::vectors_path;
use genie_lsh::stored::IndexFamily;
use genie_lsh::{estimate, CodebookIndex, CodebookParams, Family, Probe, VectorIndex};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The metadata of the index file at `path`.
fn metadata(path: &Path) -> Value {
    serde_json::from_str(InvertedIndex::load(path).unwrap().metadata()).unwrap()
}

/// A copy of the index at `path` (with its side files) whose metadata is in the form written
/// before: `"plugin"`, no `"family"` (and, for an LSH index, no `"kind"`).
fn as_written_before(path: &Path, plugin: &str) -> PathBuf {
    let old = path.with_file_name("old.genie");
    let mut meta = metadata(path);
    let map = meta.as_object_mut().unwrap();
    map.remove("family");
    if plugin == "genie-lsh" {
        map.remove("kind");
    }
    map.insert("plugin".into(), plugin.into());
    let core = InvertedIndex::load(path).unwrap();
    core.save_with_metadata(&old, &meta.to_string()).unwrap();
    for side in [vectors_path, codebook_path] {
        if side(path).exists() {
            std::fs::copy(side(path), side(&old)).unwrap();
        }
    }
    old
}

#[test]
fn an_lsh_index_records_its_family_and_an_older_file_still_opens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.genie");
    let data = clusters(500, 1);
    let params = estimate::estimate(&data, Family::Srp, 3).unwrap();
    let index = VectorIndex::build(data, params, DeviceChoice::Cpu).unwrap();
    index.save(&path).unwrap();
    let meta = metadata(&path);
    assert_eq!(meta["kind"], "vectors");
    assert_eq!(meta["family"], "srp");
    assert!(meta.get("plugin").is_none(), "{meta}");
    assert_eq!(IndexFamily::of(&meta), Some(IndexFamily::Lsh));

    let old = as_written_before(&path, "genie-lsh");
    assert_eq!(IndexFamily::of(&metadata(&old)), Some(IndexFamily::Lsh));
    let reopened = VectorIndex::load(&old, DeviceChoice::Cpu).unwrap();
    assert_eq!(reopened.metadata().family, "srp");
    let queries = clusters(20, 2);
    assert_eq!(
        reopened.search(&queries, 5, 50).unwrap(),
        index.search(&queries, 5, 50).unwrap()
    );
    // a codebook index is not an LSH one
    let e = CodebookIndex::load(&old, DeviceChoice::Cpu).unwrap_err();
    assert!(e.to_string().contains("not a codebook vector index"), "{e}");
}

#[test]
fn a_codebook_index_records_its_family_and_an_older_file_still_opens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.genie");
    let base = clusters(2000, 1);
    let params = CodebookParams::for_data(base.len(), base.dim(), 5);
    let index =
        CodebookIndex::build(base, params, Probe::default(), DeviceChoice::Cpu, None).unwrap();
    index.save(&path).unwrap();
    let meta = metadata(&path);
    assert_eq!(meta["kind"], "vectors");
    assert_eq!(meta["family"], "codebook");
    assert!(meta.get("plugin").is_none(), "{meta}");

    let old = as_written_before(&path, "genie-codebook");
    assert_eq!(
        IndexFamily::of(&metadata(&old)),
        Some(IndexFamily::Codebook)
    );
    let reopened = CodebookIndex::load(&old, DeviceChoice::Cpu).unwrap();
    assert_eq!(reopened.metadata().family, "codebook");
    let queries = clusters(20, 2);
    let probe = Probe::default();
    assert_eq!(
        reopened.search(&queries, 5, &probe).unwrap(),
        index.search(&queries, 5, &probe).unwrap()
    );
    let e = VectorIndex::load(&old, DeviceChoice::Cpu).unwrap_err();
    assert!(
        e.to_string().contains("not a genie-lsh vector index"),
        "{e}"
    );
}

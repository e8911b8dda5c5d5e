//! The LSH families tuned at build time: on a small fixed clustered data set the tuned index
//! reaches its target recall on held-out queries, the tuned values survive a save and a load,
//! given values are kept, and bad targets are refused.
#![allow(clippy::unwrap_used)]

mod common;

use common::{clusters, joined, recall_at_10};

use genie_core::DeviceChoice;
use genie_lsh::tune::{build_tuned, TuneReport, TuneSpec};
use genie_lsh::tuning::exact_neighbours_by;
use genie_lsh::{estimate, Family, IndexMetadata, VectorIndex, VectorSet};

/// Recall@10 of `index` with its default candidates on `queries`, held out of `base`.
fn held_out_recall(index: &VectorIndex, base: &VectorSet, queries: &VectorSet) -> f64 {
    let (joined, ids) = joined(base, queries);
    let metric = index.metadata().metric;
    // 10 neighbours among the base rows: the other queries are left out of the truth
    let truth = exact_neighbours_by(&joined, &ids, 10 + queries.len(), metric);
    let hits = index
        .search(queries, 10, index.default_candidates(10))
        .unwrap();
    recall_at_10(&hits, &truth, base.len())
}

fn tuned(family: Family, target: f64) -> (VectorIndex, TuneReport, VectorSet) {
    let base = clusters(6000, 1);
    let params = estimate::estimate(&base, family, 5).unwrap();
    let spec = TuneSpec {
        target,
        keep_width: false,
        candidates: None,
    };
    let (index, report) =
        build_tuned(base.clone(), params, &spec, DeviceChoice::Cpu, None).unwrap();
    (index, report.unwrap(), base)
}

#[test]
fn tuned_e2lsh_reaches_its_recall_on_held_out_queries_and_survives_a_reload() {
    let (index, report, base) = tuned(Family::E2lsh, 0.9);
    let queries = clusters(300, 2);
    assert!(report.tuned.reached, "{report:?}");
    assert!(report.tuned.sample.recall >= 0.9, "{report:?}");
    assert!(report.tuned.width_tuned && report.tuned.candidates_tuned);
    assert!(!report.trials.is_empty());
    // the number of functions is the tau-ANN rule's, whatever the width
    assert_eq!(
        index.metadata().params.functions,
        genie_lsh::params::default_functions()
    );
    let meta = index.metadata();
    assert_eq!(meta.candidates, Some(report.candidates));
    assert_eq!(meta.tuned.as_ref(), Some(&report.tuned));
    assert_eq!(meta.params.width, report.params.width);
    let r = held_out_recall(&index, &base, &queries);
    println!(
        "e2lsh: width {:.3} ({:.2} x), {} candidates, sample recall {:.3}, held-out {r:.3}",
        report.params.width,
        report.params.width / report.start_width,
        report.candidates,
        report.tuned.sample.recall
    );
    assert!(r >= 0.9, "held-out recall {r}, {report:?}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tuned.genie");
    index.save(&path).unwrap();
    let loaded = VectorIndex::load(&path, DeviceChoice::Cpu).unwrap();
    assert_eq!(loaded.metadata(), index.metadata());
    assert_eq!(loaded.default_candidates(10), report.candidates as usize);
    // a larger k re-ranks the same share of its hits
    assert_eq!(
        loaded.default_candidates(40),
        (report.candidates as usize * 4).max(40)
    );
    let c = loaded.default_candidates(10);
    assert_eq!(
        loaded.search(&queries, 10, c).unwrap(),
        index.search(&queries, 10, c).unwrap()
    );
    // the same build again: the same choice (costs are counted, not timed)
    let (again, report2, _) = tuned(Family::E2lsh, 0.9);
    assert_eq!(again.metadata(), index.metadata());
    assert_eq!(report2.trials, report.trials);
}

#[test]
fn every_family_tunes_to_its_target() {
    for family in [Family::L1, Family::Rbh, Family::Srp] {
        let (index, report, base) = tuned(family, 0.85);
        assert!(report.tuned.reached, "{family:?} {report:?}");
        assert_eq!(report.tuned.width_tuned, family.has_width(), "{family:?}");
        let r = held_out_recall(&index, &base, &clusters(200, 3));
        println!(
            "{}: width {:.3} ({:.2} x), {} candidates, sample recall {:.3}, held-out {r:.3}",
            family.name(),
            report.params.width,
            report.params.width / report.start_width.max(f64::MIN_POSITIVE),
            report.candidates,
            report.tuned.sample.recall
        );
        assert!(r >= 0.85, "{family:?}: held-out recall {r}, {report:?}");
    }
}

#[test]
fn given_values_are_kept() {
    let base = clusters(3000, 1);
    let params = estimate::estimate(&base, Family::E2lsh, 5).unwrap();
    let width = params.width * 0.7;
    let fixed = genie_lsh::LshParams {
        width,
        ..params.clone()
    };
    // the width given: only the candidates are tuned
    let spec = TuneSpec {
        target: 0.9,
        keep_width: true,
        candidates: None,
    };
    let (index, report) =
        build_tuned(base.clone(), fixed.clone(), &spec, DeviceChoice::Cpu, None).unwrap();
    let report = report.unwrap();
    assert_eq!(index.metadata().params.width, width);
    assert!(report.trials.is_empty() && !report.tuned.width_tuned);
    assert!(report.tuned.candidates_tuned);
    // the candidates given: only the width is tuned, and the recall is measured at them
    let spec = TuneSpec {
        target: 0.9,
        keep_width: false,
        candidates: Some(77),
    };
    let (index, report) =
        build_tuned(base.clone(), params.clone(), &spec, DeviceChoice::Cpu, None).unwrap();
    let report = report.unwrap();
    assert_eq!(report.candidates, 77);
    assert_eq!(index.metadata().candidates, Some(77));
    assert!(report.tuned.width_tuned && !report.tuned.candidates_tuned);
    // both given: nothing tuned, the candidates stored
    let spec = TuneSpec {
        target: 0.9,
        keep_width: true,
        candidates: Some(33),
    };
    let (index, report) = build_tuned(base.clone(), fixed, &spec, DeviceChoice::Cpu, None).unwrap();
    assert!(report.is_none());
    assert_eq!(index.metadata().params.width, width);
    assert_eq!(index.metadata().candidates, Some(33));
    assert!(index.metadata().tuned.is_none());
    assert_eq!(index.default_candidates(10), 33);
    // a set too small to hold out a sample is built untuned
    let small = base.head(15);
    let (index, report) = build_tuned(
        small,
        params.clone(),
        &TuneSpec {
            candidates: None,
            ..spec
        },
        DeviceChoice::Cpu,
        None,
    )
    .unwrap();
    assert!(report.is_none());
    assert_eq!(index.default_candidates(10), 200);
}

#[test]
fn bad_targets_are_refused() {
    let base = clusters(500, 1);
    let params = estimate::estimate(&base, Family::E2lsh, 5).unwrap();
    for target in [0.0, -0.1, 1.5, f64::NAN] {
        let spec = TuneSpec {
            target,
            keep_width: false,
            candidates: None,
        };
        let e =
            build_tuned(base.clone(), params.clone(), &spec, DeviceChoice::Cpu, None).unwrap_err();
        assert!(
            e.to_string()
                .contains("the target recall must lie in (0, 1]"),
            "{target}: {e}"
        );
    }
    let spec = TuneSpec {
        target: 0.9,
        keep_width: false,
        candidates: Some(0),
    };
    assert!(build_tuned(base, params, &spec, DeviceChoice::Cpu, None).is_err());
}

#[test]
fn indexes_built_before_the_tuning_still_load() {
    let base = clusters(300, 1);
    let params = estimate::estimate(&base, Family::E2lsh, 5).unwrap();
    let index = VectorIndex::build(base, params, DeviceChoice::Cpu).unwrap();
    // what an index of the previous version records: no candidates, no tuning
    let mut old = serde_json::to_value(index.metadata()).unwrap();
    let map = old.as_object_mut().unwrap();
    assert!(!map.contains_key("candidates") && !map.contains_key("tuned"));
    map.remove("candidates");
    let meta = IndexMetadata::parse(&old.to_string()).unwrap();
    assert_eq!(meta.candidates, None);
    assert_eq!(meta.tuned, None);
    assert_eq!(meta.default_candidates(10), 200);
    assert_eq!(meta.default_candidates(50), 1000);
    assert_eq!(index.default_candidates(1), 200);
}

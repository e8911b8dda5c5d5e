//! Golden keywords and signatures for fixed seeds: what a saved index depends on must never drift
//! (a change here makes every saved index answer differently).
#![allow(clippy::unwrap_used)]

use genie_core::Transform;
use genie_lsh::hash::binning::RandomBinning;
use genie_lsh::hash::minhash::MinHash;
use genie_lsh::hash::projection::ProjectionHash;
use genie_lsh::hash::sign::SignProjection;
use genie_lsh::hash::VectorHash;
use genie_lsh::{Family, LshParams, MinHashParams, MinHashTransform, VectorTransform};

const V: [f32; 6] = [0.5, -1.25, 3.0, 0.0, 7.5, -2.0];

fn params(family: Family, width: f64) -> LshParams {
    LshParams {
        buckets: 1000,
        ..LshParams::new(family, V.len(), 5, width, 42)
    }
}

fn keywords(p: LshParams) -> Vec<u32> {
    VectorTransform::new(p).unwrap().keywords(&V).unwrap()
}

#[test]
fn golden_vector_keywords() {
    let got = [
        keywords(params(Family::E2lsh, 2.0)),
        keywords(params(Family::L1, 2.0)),
        keywords(params(Family::Rbh, 3.0)),
        keywords(params(Family::Srp, 0.0)),
    ];
    let want: [Vec<u32>; 4] = [
        vec![949, 1311, 2636, 3741, 4025],
        vec![27, 1235, 2550, 3683, 4128],
        vec![506, 1715, 2326, 3340, 4988],
        vec![693, 1065, 2282, 3293, 4454],
    ];
    assert_eq!(got, want);
}

#[test]
fn golden_raw_signatures() {
    let e2 = ProjectionHash::new(&params(Family::E2lsh, 2.0));
    let srp = SignProjection::new(&params(Family::Srp, 0.0));
    let mh = MinHash::new(3, 42);
    let got = (
        (0..5).map(|i| e2.value(i, &V)).collect::<Vec<_>>(),
        (0..5).map(|i| srp.value(i, &V)).collect::<Vec<_>>(),
        (0..3)
            .map(|i| mh.value(i, &[1, 5, 9, 200]).unwrap())
            .collect::<Vec<_>>(),
    );
    let want: (Vec<i64>, Vec<u64>, Vec<u32>) = (
        vec![-1, -2, -5, -2, -11],
        vec![88, 48, 116, 32, 46],
        vec![152_639_760, 461_843_764, 363_561_487],
    );
    assert_eq!(got, want);
}

#[test]
fn golden_minhash_keywords() {
    let t = MinHashTransform::new(MinHashParams {
        functions: 4,
        buckets: 100,
        seed: 7,
    })
    .unwrap();
    let got = t.keywords(&[3, 1, 4, 1, 5, 9, 2, 6]);
    assert_eq!(got, [77, 168, 216, 378]);
    assert!(t.keywords(&[]).is_empty());
}

#[test]
fn functions_are_a_prefix_and_reproducible() {
    for family in [Family::E2lsh, Family::L1, Family::Rbh, Family::Srp] {
        let small = keywords(params(family, 2.0));
        let mut big = params(family, 2.0);
        big.functions = 9;
        let big = keywords(big);
        assert_eq!(&big[..5], &small[..], "{family:?}");
        assert_eq!(small, keywords(params(family, 2.0)));
        let mut other = params(family, 2.0);
        other.seed = 43;
        assert_ne!(keywords(other), small, "{family:?}");
        // function i's keyword lies in its block [i * D, (i + 1) * D)
        for (i, &k) in big.iter().enumerate() {
            assert_eq!(k / 1000, i as u32);
        }
    }
}

#[test]
fn transform_trait_matches_keywords() {
    let t = VectorTransform::new(params(Family::E2lsh, 2.0)).unwrap();
    let mut obj = Vec::new();
    t.object(&V, &mut obj).unwrap();
    assert_eq!(obj, t.keywords(&V).unwrap());
    let q = t.query(&V).unwrap();
    assert_eq!(q.items.len(), 5);
    assert!(q
        .items
        .iter()
        .zip(&obj)
        .all(|(it, &k)| it.lo == k && it.hi == k));
    assert_eq!(t.keyword_space(), 5000);
    assert_eq!(t.blocks(), vec![0, 1000, 2000, 3000, 4000]);
    assert!(t.object(&V[..3], &mut obj).is_err());
    assert!(t.metadata().contains("\"e2lsh\""));
}

#[test]
fn golden_binning_cells() {
    let rbh = RandomBinning::new(&params(Family::Rbh, 3.0));
    let cells: Vec<i32> = (0..V.len()).map(|j| rbh.cell(0, j, V[j])).collect();
    let mut sig = Vec::new();
    rbh.signature(0, &V, &mut sig);
    // the signature is the cells as zigzag varints
    let zigzag: Vec<u8> = cells
        .iter()
        .map(|&c| ((c << 1) ^ (c >> 31)) as u8)
        .collect();
    assert_eq!(sig, zigzag);
    assert_eq!(cells, [-1, -1, 11, -1, 0, -1]);
}

//! The shared test vectors of `tests/vectors/`, through the native decoder and join: every join
//! type's changelog must equal the hand-derived expectation, row for row, in order.

use cdcjoin_replay::{parse_join_type, Vector};
use std::path::PathBuf;

fn vectors() -> Vec<(PathBuf, Vector)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/vectors exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let v = serde_json::from_slice(&std::fs::read(&p).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, v)
        })
        .collect()
}

#[test]
fn every_vector_gives_its_expected_changelog() {
    let all = vectors();
    assert!(all.len() >= 4, "the vectors are there");
    for (path, v) in all {
        assert_eq!(
            v.expected.len(),
            4,
            "{}: one expectation per join type",
            path.display()
        );
        for (jt, want) in &v.expected {
            let got = v
                .run(parse_join_type(jt).unwrap())
                .unwrap_or_else(|e| panic!("{} {jt}: {e}", path.display()));
            assert_eq!(&got, want, "{} {jt} JOIN", path.display());
        }
    }
}

//! Golden wire-format files (`tests/wire/` at the repository root), shared by the Rust and the Java
//! tests so that each format's bytes are pinned once, in files both sides read, instead of being
//! written inline in tests on either side.
//!
//! A Rust test builds a format's bytes with the production encoder and calls [`check`]: it compares
//! them with the file and names the first differing byte. Run the tests with `CDCJOIN_WRITE_GOLDEN=1`
//! to rewrite the files from the encoders instead (after a deliberate format change; the Java tests
//! then hold the Java mirror to the new bytes). Only compiled for tests (feature `golden`).

use std::path::PathBuf;

/// Environment variable that makes [`check`] rewrite the files.
pub const WRITE_ENV: &str = "CDCJOIN_WRITE_GOLDEN";

/// The path of golden file `name` in `tests/wire/`.
pub fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/wire")
        .join(name)
}

/// The bytes of golden file `name`; panics (a test failure) when it cannot be read.
#[track_caller]
pub fn read(name: &str) -> Vec<u8> {
    let p = path(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("golden file {}: {e}", p.display()))
}

/// Where `actual` and `expected` first differ, as a message naming the byte, or `None`.
pub fn first_difference(actual: &[u8], expected: &[u8]) -> Option<String> {
    if let Some(i) = (0..actual.len().min(expected.len())).find(|&i| actual[i] != expected[i]) {
        return Some(format!(
            "byte {i} differs: 0x{:02X} written, 0x{:02X} expected",
            actual[i], expected[i]
        ));
    }
    (actual.len() != expected.len()).then(|| {
        format!(
            "lengths differ: {} bytes written, {} expected",
            actual.len(),
            expected.len()
        )
    })
}

/// Holds `actual` to golden file `name` (or rewrites it under [`WRITE_ENV`]), panicking with the
/// first differing byte (reported at the caller's line).
#[track_caller]
pub fn check(name: &str, actual: &[u8]) {
    if std::env::var_os(WRITE_ENV).is_some() {
        let p = path(name);
        std::fs::write(&p, actual).unwrap_or_else(|e| panic!("golden file {}: {e}", p.display()));
        return;
    }
    if let Some(diff) = first_difference(actual, &read(name)) {
        panic!("golden file {name}: {diff} (rewrite with {WRITE_ENV}=1 if intended)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_the_byte() {
        assert_eq!(first_difference(b"abc", b"abc"), None);
        assert_eq!(
            first_difference(b"abc", b"abd").unwrap(),
            "byte 2 differs: 0x63 written, 0x64 expected"
        );
        assert_eq!(
            first_difference(b"ab", b"abc").unwrap(),
            "lengths differ: 2 bytes written, 3 expected"
        );
    }
}

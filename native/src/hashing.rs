//! Streaming SHA-256 content hashing of files.
//!
//! Docent fingerprints every ingested document so re-ingestion can skip
//! unchanged files. Corpora are large (hundreds of files, hundreds of MB), so
//! files are read in bounded chunks (never whole into memory) and hashed in
//! parallel across files; each file's digest is still computed sequentially,
//! so results are identical to `hashlib.sha256`.
//!
//! This module is pure Rust (no PyO3 types) so it can be unit-tested with
//! `cargo test` and reused outside Python.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::error::NativeError;

/// Default read size: 1 MiB balances syscall overhead against memory per thread.
pub const DEFAULT_CHUNK_SIZE: usize = 1 << 20;

/// Largest accepted chunk size (64 MiB). One buffer of this size lives per
/// worker thread, so the cap bounds peak memory regardless of the caller.
pub const MAX_CHUNK_SIZE: usize = 1 << 26;

/// `chunk_size` as Python passes it, checked: `1..=MAX_CHUNK_SIZE`.
pub fn check_chunk_size(chunk_size: i64) -> Result<usize, NativeError> {
    usize::try_from(chunk_size)
        .ok()
        .filter(|c| (1..=MAX_CHUNK_SIZE).contains(c))
        .ok_or(NativeError::ChunkSize)
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Lowercase hexadecimal encoding, matching `hashlib`'s `hexdigest()`.
fn to_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 0x0f) as usize] as char);
    }
    out
}

/// SHA-256 of an in-memory buffer as lowercase hex.
pub fn sha256_bytes(data: &[u8]) -> String {
    to_hex(&Sha256::digest(data))
}

/// SHA-256 of everything `reader` yields, reading through `buf` so memory use
/// is bounded by `buf.len()` whatever the input size.
pub fn sha256_reader<R: Read>(reader: &mut R, buf: &mut [u8]) -> io::Result<String> {
    let mut hasher = Sha256::new();
    loop {
        match reader.read(buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(to_hex(&hasher.finalize()))
}

/// Streaming SHA-256 of one file, read `chunk_size` bytes at a time.
///
/// The buffer is never larger than the file (plus one byte to observe EOF),
/// so hashing many small files with a large chunk size stays cheap.
pub fn sha256_file(path: &Path, chunk_size: usize) -> io::Result<String> {
    let mut file = File::open(path)?;
    let len_hint = file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    let buf_len = usize::try_from(len_hint.saturating_add(1))
        .unwrap_or(usize::MAX)
        .clamp(1, chunk_size.max(1));
    let mut buf = vec![0u8; buf_len];
    sha256_reader(&mut file, &mut buf)
}

/// Hash many files in parallel; output order equals input order.
///
/// All files are attempted; if any fail, the error for the earliest failing
/// path in input order is returned, so the reported error is deterministic
/// regardless of thread scheduling. Parallelism comes from rayon's global
/// pool, which is sized by `std::thread::available_parallelism`.
pub fn sha256_files<P: AsRef<Path> + Sync>(
    paths: &[P],
    chunk_size: usize,
) -> Result<Vec<String>, NativeError> {
    if !(1..=MAX_CHUNK_SIZE).contains(&chunk_size) {
        return Err(NativeError::ChunkSize);
    }
    let results: Vec<io::Result<String>> = paths
        .par_iter()
        .map(|p| sha256_file(p.as_ref(), chunk_size))
        .collect();
    results
        .into_iter()
        .enumerate()
        .map(|(index, r)| {
            r.map_err(|source| NativeError::Io {
                index,
                path: paths[index].as_ref().to_path_buf(),
                source,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::path::PathBuf;

    const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    /// A unique scratch directory under the system temp dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(tag: &str) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "docent_native_test_{tag}_{}_{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        fn file(&self, name: &str, data: &[u8]) -> PathBuf {
            let p = self.0.join(name);
            File::create(&p).unwrap().write_all(data).unwrap();
            p
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Deterministic pseudo-random bytes (xorshift) so tests need no extra crates.
    fn pseudo_random(len: usize, mut seed: u64) -> Vec<u8> {
        (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 24) as u8
            })
            .collect()
    }

    #[test]
    fn known_vectors() {
        assert_eq!(sha256_bytes(b""), EMPTY);
        assert_eq!(sha256_bytes(b"abc"), ABC);
    }

    #[test]
    fn reader_matches_one_shot_for_every_chunk_size() {
        let data = pseudo_random(1000, 42);
        let expected = sha256_bytes(&data);
        for chunk in [1, 2, 3, 7, 64, 999, 1000, 1001, 4096] {
            let mut buf = vec![0u8; chunk];
            let got = sha256_reader(&mut data.as_slice(), &mut buf).unwrap();
            assert_eq!(got, expected, "chunk={chunk}");
        }
    }

    #[test]
    fn files_in_input_order_including_empty_and_duplicates() {
        let s = Scratch::new("order");
        let a = s.file("a", b"abc");
        let e = s.file("e", b"");
        let big_data = pseudo_random(3 * 1024 + 5, 7);
        let big = s.file("big", &big_data);
        let got = sha256_files(&[&a, &e, &big, &a], 1024).unwrap();
        assert_eq!(
            got,
            vec![
                ABC.into(),
                EMPTY.into(),
                sha256_bytes(&big_data),
                ABC.into()
            ]
        );
    }

    #[test]
    fn empty_path_list() {
        let none: [&Path; 0] = [];
        assert!(sha256_files(&none, DEFAULT_CHUNK_SIZE).unwrap().is_empty());
    }

    #[test]
    fn missing_file_reports_first_failing_path() {
        let s = Scratch::new("missing");
        let ok = s.file("ok", b"x");
        let m1 = s.0.join("missing-1");
        let m2 = s.0.join("missing-2");
        let err = sha256_files(&[&ok, &m1, &m2], 16).unwrap_err();
        assert!(err.to_string().contains("missing-1"));
        match err {
            NativeError::Io {
                index,
                path,
                source,
            } => {
                assert_eq!(index, 1);
                assert_eq!(path, m1);
                assert_eq!(source.kind(), io::ErrorKind::NotFound);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn directory_is_an_io_error() {
        let s = Scratch::new("dir");
        let err = sha256_files(&[&s.0], 16).unwrap_err();
        assert!(matches!(err, NativeError::Io { index: 0, .. }));
    }

    #[test]
    fn chunk_size_bounds() {
        let none: [&Path; 0] = [];
        assert!(matches!(
            sha256_files(&none, 0),
            Err(NativeError::ChunkSize)
        ));
        assert!(sha256_files(&none, MAX_CHUNK_SIZE + 1).is_err());
        assert!(sha256_files(&none, MAX_CHUNK_SIZE).is_ok());
        assert_eq!(
            NativeError::ChunkSize.to_string(),
            "chunk_size must be between 1 and 67108864"
        );
        let max = MAX_CHUNK_SIZE as i64;
        assert_eq!(check_chunk_size(1).unwrap(), 1);
        assert_eq!(check_chunk_size(max).unwrap(), MAX_CHUNK_SIZE);
        for bad in [0, -1, i64::MIN, max + 1] {
            assert!(matches!(check_chunk_size(bad), Err(NativeError::ChunkSize)));
        }
    }

    #[test]
    fn hex_is_lowercase_and_padded() {
        assert_eq!(to_hex(&[0x00, 0x0f, 0xab, 0xff]), "000fabff");
    }
}

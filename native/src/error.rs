//! The crate's one error type, and its bridge to Python exceptions.
//!
//! Every core function that can fail returns `Result<_, NativeError>`, and
//! `Display` is the exact message the Python layer raises (the Python
//! references in `testkit/native_reference*.py` raise the same text), so the
//! bindings in `lib.rs` turn any failure into the exception promised by
//! `docent_native.pyi` with `?` and hold no checks or messages of their own.

use std::fmt;
use std::io;
use std::path::PathBuf;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use crate::hashing::MAX_CHUNK_SIZE;

/// Why a native function refused its arguments or could not finish.
///
/// Every variant but [`NativeError::Io`] is a bad argument (`ValueError`).
#[derive(Debug)]
pub enum NativeError {
    /// `chunk_size` outside `1..=MAX_CHUNK_SIZE`.
    ChunkSize,
    /// Opening or reading the file at `index` (input order) failed.
    Io {
        index: usize,
        /// The path as given by the caller.
        path: PathBuf,
        source: io::Error,
    },
    /// `k` is not finite or not strictly positive.
    InvalidK,
    /// `weights` length differs from the number of rankings.
    WeightsLength { weights: usize, rankings: usize },
    /// A weight is negative, NaN or infinite.
    InvalidWeight { index: usize },
    /// `limit` is negative.
    NegativeLimit,
    /// `floor` is neither `"min"` nor `"mean"`.
    Floor,
    /// `scores` has a different number of lists than `rankings`.
    ScoresCount { scores: usize, rankings: usize },
    /// `scores[index]` length differs from `rankings[index]`.
    ScoresLength {
        index: usize,
        scores: usize,
        keys: usize,
    },
    /// A score of `scores[index]` is NaN or infinite.
    NonFiniteScore { index: usize },
    /// A similarity is NaN or infinite.
    NonFiniteSimilarity,
    /// `min_quote_chars` is below 1.
    MinQuoteChars,
    /// `max_sentences` is negative.
    NegativeMaxSentences,
}

impl fmt::Display for NativeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NativeError::ChunkSize => {
                write!(f, "chunk_size must be between 1 and {MAX_CHUNK_SIZE}")
            }
            NativeError::Io { path, source, .. } => write!(f, "{}: {source}", path.display()),
            NativeError::InvalidK => write!(f, "k must be finite and > 0"),
            NativeError::WeightsLength { weights, rankings } => write!(
                f,
                "weights has {weights} entries but there are {rankings} rankings"
            ),
            NativeError::InvalidWeight { index } => {
                write!(f, "weights[{index}] must be finite and >= 0")
            }
            NativeError::NegativeLimit => write!(f, "limit must be >= 0"),
            NativeError::Floor => write!(f, "floor must be 'min' or 'mean'"),
            NativeError::ScoresCount { scores, rankings } => write!(
                f,
                "scores has {scores} lists but there are {rankings} rankings"
            ),
            NativeError::ScoresLength {
                index,
                scores,
                keys,
            } => write!(
                f,
                "scores[{index}] has {scores} entries but rankings[{index}] has {keys}"
            ),
            NativeError::NonFiniteScore { index } => write!(f, "scores[{index}] must be finite"),
            NativeError::NonFiniteSimilarity => write!(f, "similarities must be finite"),
            NativeError::MinQuoteChars => write!(f, "min_quote_chars must be >= 1"),
            NativeError::NegativeMaxSentences => write!(f, "max_sentences must be >= 0"),
        }
    }
}

impl std::error::Error for NativeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NativeError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// `n` as a count of at least `min`, else `error`: Python passes signed
/// integers, and a negative one must fail with the function's own message
/// rather than PyO3's `OverflowError`.
pub fn count_at_least(n: i64, min: usize, error: NativeError) -> Result<usize, NativeError> {
    usize::try_from(n).ok().filter(|&c| c >= min).ok_or(error)
}

impl From<NativeError> for PyErr {
    fn from(err: NativeError) -> PyErr {
        match err {
            NativeError::Io { path, source, .. } => {
                Python::attach(|py| os_error(py, &source, &path))
            }
            other => PyValueError::new_err(other.to_string()),
        }
    }
}

/// `OSError(errno, strerror, filename)`, built by calling the type so that
/// Python picks the subclass (`FileNotFoundError`, `IsADirectoryError`...)
/// and the text exactly as `open()` would. `filename` is the path as given
/// (PyO3 read it with `os.fspath`, and `OsStr` converts back to that `str`).
fn os_error(py: Python<'_>, err: &io::Error, path: &std::path::Path) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let filename = path.as_os_str().into_pyobject(py)?;
        let Some(errno) = err.raw_os_error() else {
            return Ok(PyOSError::new_err(format!("{err}: {filename}")));
        };
        let strerror = py.import("os")?.getattr("strerror")?.call1((errno,))?;
        let exc = py
            .get_type::<PyOSError>()
            .call1((errno, strerror, filename))?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|e| e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_refuse_negatives_and_values_below_the_minimum() {
        assert_eq!(count_at_least(3, 1, NativeError::MinQuoteChars).unwrap(), 3);
        assert_eq!(count_at_least(0, 0, NativeError::NegativeLimit).unwrap(), 0);
        for (n, min) in [(-1, 0), (0, 1), (i64::MIN, 0)] {
            let err = count_at_least(n, min, NativeError::NegativeLimit).unwrap_err();
            assert!(matches!(err, NativeError::NegativeLimit));
        }
    }

    #[test]
    fn io_errors_name_the_path_and_keep_their_source() {
        let err = NativeError::Io {
            index: 0,
            path: PathBuf::from("missing.pdf"),
            source: io::Error::from(io::ErrorKind::NotFound),
        };
        assert!(err.to_string().starts_with("missing.pdf: "));
        assert!(std::error::Error::source(&err).is_some());
        assert!(std::error::Error::source(&NativeError::InvalidK).is_none());
    }
}

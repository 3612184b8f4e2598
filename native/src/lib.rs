//! `docent_native`: thin PyO3 bindings over Docent's pure-Rust hot paths.
//!
//! This file only converts Python values to plain Rust data and back, and
//! releases the GIL around the real work (in [`hashing`], [`fusion`],
//! [`evidence`], [`sentences`], [`markers`], [`validate`] and [`claims`],
//! which hold no PyO3 types). The core checks its own arguments and fails
//! with [`error::NativeError`], which `?` turns into the Python exception
//! promised in `docent_native.pyi`. Keeping the core PyO3-free lets
//! `cargo test` cover it.

pub mod block_numbers;
pub mod chars;
pub mod cited;
pub mod claims;
#[cfg(test)]
mod claims_tests;
pub mod dates;
pub mod error;
pub mod evidence;
pub mod facts;
pub mod fusion;
pub mod hashing;
pub mod lexicon;
pub mod markers;
pub mod numbers;
pub mod polarity;
pub mod score_fusion;
pub mod sentences;
pub mod validate;
pub mod word_table;

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use error::NativeError;

/// Below this many bytes, releasing the GIL costs more than the hashing.
const DETACH_THRESHOLD: usize = 64 * 1024;

/// Below this much work (UTF-8 bytes of text, or floats) the text and
/// evidence functions keep the GIL: releasing it would cost more.
const TEXT_DETACH_THRESHOLD: usize = 4 * 1024;

/// Run `work` with the GIL released when `size` makes that worthwhile.
fn maybe_detach<T: Send>(py: Python<'_>, size: usize, work: impl FnOnce() -> T + Send) -> T {
    if size < TEXT_DETACH_THRESHOLD {
        work()
    } else {
        py.detach(work)
    }
}

/// Borrow the UTF-8 of each `str`; the caller's list keeps them alive (and
/// `str` is immutable), so the slices stay valid while the GIL is released.
fn borrow_strs<'a>(strs: &'a [Bound<'_, PyString>]) -> PyResult<Vec<&'a str>> {
    strs.iter().map(|s| s.to_str()).collect()
}

/// Borrow every key of every ranking, as [`borrow_strs`].
fn borrow_rankings<'a>(rankings: &'a [Vec<Bound<'_, PyString>>]) -> PyResult<Vec<Vec<&'a str>>> {
    rankings.iter().map(|r| borrow_strs(r)).collect()
}

/// The fused keys as the caller's own `str` objects rather than copies.
fn caller_keys<'py>(
    rankings: &[Vec<Bound<'py, PyString>>],
    fused: Vec<fusion::Fused>,
) -> Vec<(Bound<'py, PyString>, f64)> {
    fused
        .into_iter()
        .map(|f| (rankings[f.ranking][f.position].clone(), f.score))
        .collect()
}

/// Streaming SHA-256 (lowercase hex) of each file, in input order, hashed in
/// parallel with the GIL released.
#[pyfunction]
#[pyo3(signature = (paths, chunk_size = 1_048_576))]
fn sha256_files(
    py: Python<'_>,
    paths: Vec<Bound<'_, PyAny>>,
    chunk_size: i64,
) -> PyResult<Vec<String>> {
    // The chunk size is checked before any path is read, as the reference does.
    let chunk = hashing::check_chunk_size(chunk_size)?;
    let fs_paths: Vec<PathBuf> = paths
        .iter()
        .map(|p| p.extract::<PathBuf>())
        .collect::<PyResult<_>>()?;
    Ok(py.detach(|| hashing::sha256_files(&fs_paths, chunk))?)
}

/// SHA-256 (lowercase hex) of an in-memory `bytes` object.
#[pyfunction]
fn sha256_bytes(py: Python<'_>, data: &[u8]) -> String {
    if data.len() < DETACH_THRESHOLD {
        hashing::sha256_bytes(data)
    } else {
        // `bytes` is immutable and the argument keeps it alive for the call.
        py.detach(|| hashing::sha256_bytes(data))
    }
}

/// Reciprocal-rank fusion; see `docent_native.pyi` for the exact contract.
#[pyfunction]
#[pyo3(signature = (rankings, k = 60.0, weights = None, limit = None))]
fn rrf_fuse<'py>(
    py: Python<'py>,
    rankings: Vec<Vec<Bound<'py, PyString>>>,
    k: f64,
    weights: Option<Vec<f64>>,
    limit: Option<i64>,
) -> PyResult<Vec<(Bound<'py, PyString>, f64)>> {
    let weights = weights.as_deref();
    // Arguments first (k, weights, limit, as the reference), then the keys.
    fusion::validate(k, weights, rankings.len())?;
    let limit = fusion::check_limit(limit)?;
    let keys = borrow_rankings(&rankings)?;
    let fused = py.detach(|| fusion::rrf_fuse(&keys, k, weights, limit))?;
    Ok(caller_keys(&rankings, fused))
}

/// Evidence sufficiency of a similarity list; see `docent_native.pyi`.
#[pyfunction]
fn evidence_contrast(py: Python<'_>, similarities: Vec<f64>) -> PyResult<f64> {
    Ok(maybe_detach(py, similarities.len(), || {
        evidence::evidence_contrast(&similarities)
    })?)
}

/// Sentence spans `(start, end)` in `str` indexes; see `docent_native.pyi`.
#[pyfunction]
fn split_sentences(py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<Vec<(usize, usize)>> {
    let text = text.to_str()?;
    Ok(maybe_detach(py, text.len(), || {
        sentences::split_sentences(text)
    }))
}

/// Per-sentence cited block numbers; see `docent_native.pyi`.
#[pyfunction]
fn parse_citations(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
) -> PyResult<Vec<(usize, usize, Vec<u32>)>> {
    let text = text.to_str()?;
    let parsed = maybe_detach(py, text.len(), || cited::parse_citations(text));
    Ok(parsed
        .into_iter()
        .map(|s| (s.start, s.end, s.citations))
        .collect())
}

/// Run an answer check (`validate_citations`, `check_claims`) on borrowed
/// strings, with the GIL released for large inputs; `min_quote_chars` is
/// checked before the strings are read.
fn with_answer_and_blocks<T: Send>(
    py: Python<'_>,
    answer: &Bound<'_, PyString>,
    blocks: &[Bound<'_, PyString>],
    min_quote_chars: i64,
    check: impl FnOnce(&str, &[&str], usize) -> Result<T, NativeError> + Send,
) -> PyResult<T> {
    let min_quote_chars = validate::check_min_quote_chars(min_quote_chars)?;
    let answer = answer.to_str()?;
    let blocks = borrow_strs(blocks)?;
    let size = answer.len() + blocks.iter().map(|b| b.len()).sum::<usize>();
    Ok(maybe_detach(py, size, || {
        check(answer, &blocks, min_quote_chars)
    })?)
}

/// Check an answer's citations against its blocks; see `docent_native.pyi`.
#[pyfunction]
#[pyo3(signature = (answer, blocks, min_quote_chars = 12))]
fn validate_citations<'py>(
    py: Python<'py>,
    answer: &Bound<'py, PyString>,
    blocks: Vec<Bound<'py, PyString>>,
    min_quote_chars: i64,
) -> PyResult<Bound<'py, PyDict>> {
    let v = with_answer_and_blocks(py, answer, &blocks, min_quote_chars, |a, b, m| {
        validate::validate_citations(a, b, m)
    })?;

    let sentences = PyList::empty(py);
    for s in v.sentences {
        let d = PyDict::new(py);
        d.set_item("start", s.start)?;
        d.set_item("end", s.end)?;
        d.set_item("citations", s.citations)?;
        sentences.append(d)?;
    }
    let bad_quotes = PyList::empty(py);
    for b in v.bad_quotes {
        let d = PyDict::new(py);
        d.set_item("sentence", b.sentence)?;
        d.set_item("quote", b.quote)?;
        bad_quotes.append(d)?;
    }
    let out = PyDict::new(py);
    out.set_item("sentences", sentences)?;
    out.set_item("unknown", v.unknown)?;
    out.set_item("uncited", v.uncited)?;
    out.set_item("bad_quotes", bad_quotes)?;
    out.set_item("valid", v.valid)?;
    Ok(out)
}

/// Fact-level check of each cited sentence; see `docent_native.pyi`.
#[pyfunction]
#[pyo3(signature = (answer, blocks, min_quote_chars = 12))]
fn check_claims<'py>(
    py: Python<'py>,
    answer: &Bound<'py, PyString>,
    blocks: Vec<Bound<'py, PyString>>,
    min_quote_chars: i64,
) -> PyResult<Bound<'py, PyList>> {
    let reports = with_answer_and_blocks(py, answer, &blocks, min_quote_chars, |a, b, m| {
        claims::check_claims(a, b, m)
    })?;

    let out = PyList::empty(py);
    for r in reports {
        let facts = PyList::empty(py);
        for f in r.facts {
            let d = PyDict::new(py);
            d.set_item("kind", f.kind.as_str())?;
            d.set_item("text", f.text)?;
            d.set_item("start", f.start)?;
            d.set_item("end", f.end)?;
            d.set_item("found", f.found)?;
            d.set_item("cited", f.cited)?;
            facts.append(d)?;
        }
        let d = PyDict::new(py);
        d.set_item("sentence", r.sentence)?;
        d.set_item("start", r.start)?;
        d.set_item("end", r.end)?;
        d.set_item("blocks", r.blocks)?;
        d.set_item("facts", facts)?;
        match r.polarity {
            None => d.set_item("polarity", py.None())?,
            Some(p) => {
                let pd = PyDict::new(py);
                pd.set_item("answer_negated", p.answer_negated)?;
                pd.set_item("evidence_negated", p.evidence_negated)?;
                pd.set_item("agrees", p.agrees)?;
                pd.set_item("block", p.block)?;
                pd.set_item("start", p.start)?;
                pd.set_item("end", p.end)?;
                d.set_item("polarity", pd)?;
            }
        }
        d.set_item("supported", r.supported)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Best query-matching sentences of ranked blocks; see `docent_native.pyi`.
#[pyfunction]
#[pyo3(signature = (query, blocks, max_sentences = 3, min_overlap = 0.2))]
fn select_evidence_sentences(
    py: Python<'_>,
    query: &Bound<'_, PyString>,
    blocks: Vec<Bound<'_, PyString>>,
    max_sentences: i64,
    min_overlap: f64,
) -> PyResult<Vec<(usize, usize, usize, f64)>> {
    let max_sentences = evidence::check_max_sentences(max_sentences)?;
    let query = query.to_str()?;
    let blocks = borrow_strs(&blocks)?;
    let size = query.len() + blocks.iter().map(|b| b.len()).sum::<usize>();
    let picked = maybe_detach(py, size, || {
        evidence::select_evidence_sentences(query, &blocks, max_sentences, min_overlap)
    });
    Ok(picked
        .into_iter()
        .map(|e| (e.block, e.start, e.end, e.score))
        .collect())
}

/// Score fusion of best-first rankings; see `docent_native.pyi`.
#[pyfunction]
#[pyo3(signature = (rankings, scores, weights = None, limit = None, floor = "min"))]
fn score_fuse<'py>(
    py: Python<'py>,
    rankings: Vec<Vec<Bound<'py, PyString>>>,
    scores: Vec<Vec<f64>>,
    weights: Option<Vec<f64>>,
    limit: Option<i64>,
    floor: &str,
) -> PyResult<Vec<(Bound<'py, PyString>, f64)>> {
    let weights = weights.as_deref();
    let (floor, limit) = score_fusion::check_args(floor, &rankings, &scores, weights, limit)?;
    let keys = borrow_rankings(&rankings)?;
    let fused =
        py.detach(|| score_fusion::score_fuse_with(&keys, &scores, weights, limit, floor))?;
    Ok(caller_keys(&rankings, fused))
}

/// The `docent_native` Python module.
#[pymodule]
fn docent_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(sha256_files, m)?)?;
    m.add_function(wrap_pyfunction!(sha256_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(rrf_fuse, m)?)?;
    m.add_function(wrap_pyfunction!(score_fuse, m)?)?;
    m.add_function(wrap_pyfunction!(evidence_contrast, m)?)?;
    m.add_function(wrap_pyfunction!(split_sentences, m)?)?;
    m.add_function(wrap_pyfunction!(parse_citations, m)?)?;
    m.add_function(wrap_pyfunction!(validate_citations, m)?)?;
    m.add_function(wrap_pyfunction!(check_claims, m)?)?;
    m.add_function(wrap_pyfunction!(select_evidence_sentences, m)?)?;
    Ok(())
}

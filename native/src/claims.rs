//! The fact-level claim check: does each cited sentence say what its blocks say?
//!
//! `validate_citations` proves that a sentence *has* a citation; this proves
//! that the citation *backs* it. The answer is split and its citations parsed
//! exactly as `parse_citations` does. A sentence citing at least one existing
//! block (1-based, `n <= blocks.len()`) is checked against those blocks, each
//! with its own citation markers blanked (a block's `[3] file.pdf` label):
//!
//! * each fact ([`crate::facts`]) must occur in one of them: a number when one
//!   of its candidate values is among the block's values
//!   ([`crate::block_numbers::block_values`]), a date when the block has that date
//!   ([`crate::dates::block_dates`]), an identifier, code span or quoted term
//!   when its search text ([`search_text`]) is a substring of the block's,
//!   a name when its case fold occurs in the block's search text at a word
//!   start (not right after a letter or digit; `_` separates words, so
//!   `Northwind` is in `northwind_leave_policy.pdf`). A name is also found
//!   when any other block holds it: the subject of a question is often named
//!   in another block than the one holding the fact, and a false alarm
//!   replaces a correct answer;
//! * its polarity must agree with the block sentences that match it most
//!   strongly ([`crate::polarity`]).
//!
//! Other sentences are reported with no facts, no polarity and `supported`.

use std::collections::HashSet;

use crate::block_numbers::block_values;
use crate::chars::is_word;
use crate::cited::parse_citations_chars;
use crate::dates::{block_dates, Date};
use crate::error::NativeError;
use crate::facts::{prepare, search_text, sentence_facts, Key, Kind};
use crate::markers::for_each_marker;
use crate::polarity::{answer_stance, evidence_stance, strong_match, Match, Stance};
use crate::sentences::split_chars;

/// One fact of a sentence; offsets index the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactReport {
    pub kind: Kind,
    pub text: String,
    pub start: usize,
    pub end: usize,
    pub found: bool,
    /// The sentence's checked blocks that hold the fact, in citation order.
    pub cited: Vec<u32>,
}

/// The block sentence a checked sentence was compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Polarity {
    pub answer_negated: bool,
    pub evidence_negated: bool,
    /// False for a mismatch: the sentence is then unsupported.
    pub agrees: bool,
    pub block: u32,
    /// Offsets of the sentence within its block.
    pub start: usize,
    pub end: usize,
}

/// The check of one answer sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimReport {
    pub sentence: usize,
    pub start: usize,
    pub end: usize,
    /// The cited blocks that exist, in citation order: what was checked.
    pub blocks: Vec<u32>,
    pub facts: Vec<FactReport>,
    pub polarity: Option<Polarity>,
    pub supported: bool,
}

/// What the check needs of one block, built once per call.
struct BlockIndex {
    search: String,
    numbers: HashSet<String>,
    dates: HashSet<Date>,
    sentences: Vec<(usize, usize, Stance)>,
}

impl BlockIndex {
    fn build(text: &str) -> Self {
        let mut t: Vec<char> = text.chars().collect();
        // Citation markers (a block's own label, `[3] file.pdf`) say nothing.
        let mut marks = Vec::new();
        for_each_marker(&t, |s, e, _| marks.push((s, e)));
        for (s, e) in marks {
            t[s..e].fill(' ');
        }
        let mut numbers = HashSet::new();
        block_values(&t, &mut numbers);
        let mut dates = HashSet::new();
        block_dates(&t, &mut dates);
        let sentences = split_chars(&t)
            .into_iter()
            .map(|(s, e)| (s, e, evidence_stance(&t[s..e])))
            .collect();
        BlockIndex {
            search: search_text(&t),
            numbers,
            dates,
            sentences,
        }
    }

    fn holds(&self, key: &Key) -> bool {
        match key {
            Key::Values(values) => values.iter().any(|v| self.numbers.contains(v)),
            Key::Date(date) => self.dates.contains(date),
            Key::Text(needle) => self.search.contains(needle.as_str()),
            Key::Name(needle) => at_word_start(&self.search, needle),
            Key::Token(needle) => whole_token(&self.search, needle),
        }
    }
}

/// Whether `needle` occurs in `hay` with no letter or digit just before or
/// just after it (overlapping occurrences included).
fn whole_token(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(offset) = hay[from..].find(needle) {
        let at = from + offset;
        let end = at + needle.len();
        let before = hay[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric);
        let after = hay[end..].chars().next().is_some_and(char::is_alphanumeric);
        if !before && !after {
            return true;
        }
        from = at + hay[at..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// Whether `needle` occurs in `hay` where no letter or digit precedes it
/// (overlapping occurrences included).
fn at_word_start(hay: &str, needle: &str) -> bool {
    let mut from = 0;
    while let Some(offset) = hay[from..].find(needle) {
        let at = from + offset;
        if !hay[..at]
            .chars()
            .next_back()
            .is_some_and(|c| is_word(c) && c != '_')
        {
            return true;
        }
        from = at + hay[at..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// The polarity comparison of one part of a sentence with its checked blocks:
/// among the strong matches sharing the most, the first agreeing one, else
/// the first.
fn compare(answer: &Stance, checked: &[(u32, &BlockIndex)]) -> Option<Polarity> {
    let mut top: Vec<(Match, u32, usize, usize)> = Vec::new();
    for &(n, index) in checked {
        for (start, end, stance) in &index.sentences {
            let Some(m) = strong_match(answer, stance) else {
                continue;
            };
            if top.first().is_some_and(|t| m.shared > t.0.shared) {
                top.clear();
            }
            if top.first().is_none_or(|t| m.shared == t.0.shared) {
                top.push((m, n, *start, *end));
            }
        }
    }
    let &(m, block, start, end) = top.iter().find(|t| t.0.agrees).or(top.first())?;
    Some(Polarity {
        answer_negated: m.answer_negated,
        evidence_negated: m.evidence_negated,
        agrees: m.agrees,
        block,
        start,
        end,
    })
}

/// The sentence's polarity: its parts (cut at `;`) compared in turn; the
/// first mismatch, else the first part compared.
fn sentence_polarity(
    prepared: &[char],
    entities: &[(usize, usize)],
    checked: &[(u32, &BlockIndex)],
) -> Option<Polarity> {
    let mut first = None;
    let mut from = 0;
    for to in (0..=prepared.len()).filter(|&k| k == prepared.len() || prepared[k] == ';') {
        let spans: Vec<(usize, usize)> = entities
            .iter()
            .filter(|&&(s, e)| from <= s && e <= to)
            .map(|&(s, e)| (s - from, e - from))
            .collect();
        let found = compare(&answer_stance(&prepared[from..to], &spans), checked);
        if found.as_ref().is_some_and(|p| !p.agrees) {
            return found;
        }
        first = first.or(found);
        from = to + 1;
    }
    first
}

/// Build the index of block `n` (1-based) if it is not built yet.
fn ensure<S: AsRef<str>>(indexes: &mut [Option<BlockIndex>], blocks: &[S], n: usize) {
    if indexes[n - 1].is_none() {
        indexes[n - 1] = Some(BlockIndex::build(blocks[n - 1].as_ref()));
    }
}

/// Fill `report` for the sentence `raw` (starting at `offset` in the
/// answer), which cites the existing blocks `checked`.
fn check_sentence<S: AsRef<str>>(
    raw: &[char],
    offset: usize,
    checked: &[u32],
    blocks: &[S],
    indexes: &mut [Option<BlockIndex>],
    min_quote_chars: usize,
    report: &mut ClaimReport,
) {
    let prepared = prepare(raw);
    let facts = sentence_facts(&prepared, min_quote_chars);
    for &n in checked {
        ensure(indexes, blocks, n as usize);
    }
    let mut holding: Vec<Vec<u32>> = facts
        .iter()
        .map(|fact| {
            checked
                .iter()
                .copied()
                .filter(|&n| {
                    indexes[n as usize - 1]
                        .as_ref()
                        .is_some_and(|i| i.holds(&fact.key))
                })
                .collect()
        })
        .collect();
    let mut found: Vec<bool> = holding.iter().map(|h| !h.is_empty()).collect();
    // A name may be the subject, named in another block of the evidence.
    for (i, fact) in facts.iter().enumerate() {
        if !found[i] && fact.kind == Kind::Name {
            found[i] = (1..=blocks.len()).any(|n| {
                ensure(indexes, blocks, n);
                indexes[n - 1]
                    .as_ref()
                    .is_some_and(|index| index.holds(&fact.key))
            });
        }
    }
    let looked: Vec<(u32, &BlockIndex)> = checked
        .iter()
        .map(|&n| (n, indexes[n as usize - 1].as_ref().expect("built above")))
        .collect();
    let entities: Vec<(usize, usize)> = facts
        .iter()
        .filter(|f| {
            matches!(
                f.kind,
                Kind::Name | Kind::Identifier | Kind::Code | Kind::Quote
            )
        })
        .map(|f| (f.start, f.end))
        .collect();
    for (i, fact) in facts.iter().enumerate() {
        report.facts.push(FactReport {
            kind: fact.kind,
            text: raw[fact.start..fact.end].iter().collect(),
            start: offset + fact.start,
            end: offset + fact.end,
            found: found[i],
            cited: std::mem::take(&mut holding[i]),
        });
    }
    report.polarity = sentence_polarity(&prepared, &entities, &looked);
    let mismatch = report.polarity.as_ref().is_some_and(|p| !p.agrees);
    report.supported = !mismatch && found.iter().all(|&f| f);
}

/// Check every sentence of `answer` against `blocks` (block `n` is
/// `blocks[n - 1]`); see the module docs.
pub fn check_claims<S: AsRef<str>>(
    answer: &str,
    blocks: &[S],
    min_quote_chars: usize,
) -> Result<Vec<ClaimReport>, NativeError> {
    if min_quote_chars < 1 {
        return Err(NativeError::MinQuoteChars);
    }
    let t: Vec<char> = answer.chars().collect();
    let mut indexes: Vec<Option<BlockIndex>> = (0..blocks.len()).map(|_| None).collect();
    let mut reports = Vec::new();
    for (sentence, cited) in parse_citations_chars(&t).into_iter().enumerate() {
        let (start, end) = (cited.start, cited.end);
        let checked: Vec<u32> = cited
            .citations
            .iter()
            .copied()
            .filter(|&n| n as usize <= blocks.len())
            .collect();
        let mut report = ClaimReport {
            sentence,
            start,
            end,
            blocks: checked.clone(),
            facts: Vec::new(),
            polarity: None,
            supported: true,
        };
        if !checked.is_empty() {
            check_sentence(
                &t[start..end],
                start,
                &checked,
                blocks,
                &mut indexes,
                min_quote_chars,
                &mut report,
            );
        }
        reports.push(report);
    }
    Ok(reports)
}

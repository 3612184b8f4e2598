//! Sentence spans for citation checking and extractive answers.
//!
//! Returns `(start, end)` character offsets (Python `str` indexes) of each
//! sentence, whitespace-trimmed; every non-whitespace character lies in
//! exactly one span, and boundaries only ever fall on whitespace runs (or just
//! after citation markers). The rules, applied to each maximal whitespace run
//! `[k, m)` strictly inside the text, with `start` the current sentence start:
//!
//! 1. **Blank line**: the run holds two or more `\n` -> boundary.
//! 2. **Line structure**: the run holds a `\n` and either the next line starts
//!    a list item (`- `, `* ` or ASCII digits + `. `, the space being any
//!    whitespace), or it starts with `#`, or the line the run ends (from after
//!    the previous `\n`, leading whitespace skipped) starts with `#` (a
//!    Markdown heading is its own sentence) -> boundary.
//! 3. **Punctuation**: `t[start..k]` ends with a run of `.!?…` followed by
//!    zero or more closers `"'”’)]`, and `t[m]` starts a sentence: an
//!    uppercase letter, an ASCII digit or `[`, optionally preceded by one
//!    opener `"'“‘([` -> boundary, unless there are no closers, the last
//!    terminal is `.`, and the last whitespace-separated word before that dot
//!    (leading `("'“‘[` stripped, case-folded) is an abbreviation in
//!    [`ABBREVIATIONS`] or a single letter (initials such as "J. Smith").
//! 4. **Trailing citations**: when rule 3 fires, the run has no `\n`, and
//!    `t[m..]` starts with one or more citation markers (see [`crate::markers`])
//!    separated only by non-newline whitespace and followed by whitespace or
//!    the end of the text, the markers stay with the previous sentence
//!    ("It is red. [1] Next." -> "It is red. [1]" + "Next.").
//!
//! Rules 1-2 win over 3-4. The Python reference mirrors this step by step.

use crate::chars::{fold, is_alpha, is_space, is_upper_word};
use crate::markers::parse_marker;

/// Characters that end a sentence.
pub const TERMINALS: [char; 4] = ['.', '!', '?', '…'];
/// Closing quotes/brackets that may follow the terminal punctuation.
pub const CLOSERS: [char; 6] = ['"', '\'', '”', '’', ')', ']'];
/// Opening quotes/brackets that may precede the next sentence's first letter.
pub const OPENERS: [char; 6] = ['"', '\'', '“', '‘', '(', '['];
/// Leading characters stripped from a word before the abbreviation lookup.
pub const WORD_PREFIXES: [char; 6] = ['(', '"', '\'', '“', '‘', '['];
/// Lower-case abbreviations (without their final dot) that do not end a
/// sentence: `common.lexicon.ABBREVIATIONS` (tests/unit/test_lexicon.py compares them).
#[rustfmt::skip]
pub const ABBREVIATIONS: [&str; 30] = [
    "e.g", "i.e", "etc", "vs", "cf", "al", "fig", "figs", "no", "nos", "vol", "pp", "p", "eq",
    "sec", "mr", "mrs", "ms", "dr", "prof", "st", "inc", "ltd", "co", "corp", "jr", "sr",
    "approx", "dept", "est",
];

/// Longest entry of [`ABBREVIATIONS`], in characters.
const MAX_ABBREVIATION: usize = 6;

/// How a whitespace run `[k, m)` ends the current sentence, if at all.
enum Cut {
    /// The sentence ends at `end`; the next one starts at `next`.
    At { end: usize, next: usize },
    /// The sentence absorbs trailing markers and runs to the end of the text.
    ToEnd,
}

/// Split `text`; offsets are char indexes.
pub fn split_sentences(text: &str) -> Vec<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    split_chars(&chars)
}

/// Split a text given as chars; see the module docs for the rules.
pub fn split_chars(t: &[char]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let Some(mut start) = t.iter().position(|&c| !is_space(c)) else {
        return spans;
    };
    let last = t.iter().rposition(|&c| !is_space(c)).map_or(0, |i| i + 1);
    let mut i = start;
    while i < last {
        if !is_space(t[i]) {
            i += 1;
            continue;
        }
        let k = i;
        let mut m = k;
        while is_space(t[m]) {
            m += 1; // stops before `last`, which follows a non-space char
        }
        match cut(t, start, k, m) {
            Some(Cut::At { end, next }) => {
                spans.push((start, end));
                start = next;
                i = next;
            }
            Some(Cut::ToEnd) => break,
            None => i = m,
        }
    }
    spans.push((start, last));
    spans
}

fn cut(t: &[char], start: usize, k: usize, m: usize) -> Option<Cut> {
    let newlines = t[k..m].iter().filter(|&&c| c == '\n').count();
    if newlines >= 2 {
        return Some(Cut::At { end: k, next: m });
    }
    if newlines == 1 && (starts_list_item(t, m) || t[m] == '#' || heading_line_ends_at(t, k)) {
        return Some(Cut::At { end: k, next: m });
    }
    if !punctuation_boundary(t, start, k, m) {
        return None;
    }
    if newlines == 0 && t[m] == '[' {
        if let Some(end) = trailing_markers(t, m) {
            return Some(match t[end..].iter().position(|&c| !is_space(c)) {
                Some(offset) => Cut::At {
                    end,
                    next: end + offset,
                },
                None => Cut::ToEnd,
            });
        }
    }
    Some(Cut::At { end: k, next: m })
}

/// `- `, `* ` or `<ASCII digits>. ` at `m` (the space: any whitespace).
fn starts_list_item(t: &[char], m: usize) -> bool {
    let mut j = m;
    if matches!(t[j], '-' | '*') {
        j += 1;
    } else {
        while j < t.len() && t[j].is_ascii_digit() {
            j += 1;
        }
        if j == m || t.get(j) != Some(&'.') {
            return false;
        }
        j += 1;
    }
    t.get(j).is_some_and(|&c| is_space(c))
}

/// Whether the line containing `t[k - 1]` starts (after whitespace) with `#`.
fn heading_line_ends_at(t: &[char], k: usize) -> bool {
    let line_start = t[..k].iter().rposition(|&c| c == '\n').map_or(0, |i| i + 1);
    t[line_start..k].iter().find(|&&c| !is_space(c)) == Some(&'#')
}

fn is_sentence_start(c: char) -> bool {
    c.is_ascii_digit() || c == '[' || is_upper_word(c)
}

/// Rule 3 of the module docs.
fn punctuation_boundary(t: &[char], start: usize, k: usize, m: usize) -> bool {
    let mut j = k;
    while j > start && CLOSERS.contains(&t[j - 1]) {
        j -= 1;
    }
    if j == start || !TERMINALS.contains(&t[j - 1]) {
        return false;
    }
    let opener_then_start =
        OPENERS.contains(&t[m]) && t.get(m + 1).is_some_and(|&c| is_sentence_start(c));
    if !(is_sentence_start(t[m]) || opener_then_start) {
        return false;
    }
    !(j == k && t[k - 1] == '.' && ends_with_abbreviation(&t[start..k - 1]))
}

/// Whether the last whitespace-separated word of `before_dot` (Python's
/// `before_dot.rsplit(None, 1)[-1]`), with leading `("'“‘[` stripped, is an
/// abbreviation or a single letter.
fn ends_with_abbreviation(before_dot: &[char]) -> bool {
    let Some(end) = before_dot
        .iter()
        .rposition(|&c| !is_space(c))
        .map(|i| i + 1)
    else {
        return false;
    };
    let begin = before_dot[..end]
        .iter()
        .rposition(|&c| is_space(c))
        .map_or(0, |i| i + 1);
    let mut word = &before_dot[begin..end];
    while let Some((first, rest)) = word.split_first() {
        if !WORD_PREFIXES.contains(first) {
            break;
        }
        word = rest;
    }
    // Folding never shortens a word, so longer words cannot match.
    if !word.is_empty() && word.len() <= MAX_ABBREVIATION {
        let folded = fold(word);
        if ABBREVIATIONS.contains(&folded.as_str()) {
            return true;
        }
    }
    word.len() == 1 && is_alpha(word[0])
}

/// Rule 4: the end of the citation markers starting at `m`, if they qualify.
fn trailing_markers(t: &[char], m: usize) -> Option<usize> {
    let mut scratch = Vec::new();
    let mut end = None;
    let mut q = m;
    while let Some(after) = parse_marker(t, q, &mut scratch) {
        end = Some(after);
        q = after;
        while q < t.len() && is_space(t[q]) && t[q] != '\n' {
            q += 1;
        }
    }
    end.filter(|&e| e == t.len() || is_space(t[e]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<String> {
        let t: Vec<char> = text.chars().collect();
        split_chars(&t)
            .into_iter()
            .map(|(s, e)| t[s..e].iter().collect())
            .collect()
    }

    #[test]
    fn basic_rules_match_the_chunker_splitter() {
        assert_eq!(
            split("One two. Three four! Five six? Seven"),
            ["One two.", "Three four!", "Five six?", "Seven"]
        );
        let text = "See e.g. Section 4.2 of the spec. Dr. Smith agreed. J. R. Doe wrote it. Version 1.5 works.";
        assert_eq!(
            split(text),
            [
                "See e.g. Section 4.2 of the spec.",
                "Dr. Smith agreed.",
                "J. R. Doe wrote it.",
                "Version 1.5 works."
            ]
        );
        assert_eq!(
            split("It costs approx. ten euros. next line"),
            ["It costs approx. ten euros. next line"]
        );
        assert_eq!(
            split("He said \"stop.\" Then left. (Really.) Yes."),
            ["He said \"stop.\"", "Then left.", "(Really.)", "Yes."]
        );
        assert_eq!(
            split("Wait… Élan vital. «Non»."),
            ["Wait…", "Élan vital. «Non»."]
        );
        assert_eq!(
            split("See (Fig. 3) and FIG. 4. Next"),
            ["See (Fig. 3) and FIG. 4.", "Next"]
        );
    }

    #[test]
    fn newline_rules() {
        assert_eq!(split("one\ntwo\n \nthree"), ["one\ntwo", "three"]);
        assert_eq!(
            split("Items:\n- a\n* b\n  12. c\n3.d"),
            ["Items:", "- a", "* b", "12. c\n3.d"]
        );
        assert_eq!(
            split("# Title\nBody text\n## Sub\nmore"),
            ["# Title", "Body text", "## Sub", "more"]
        );
        assert_eq!(split("-x\n-\ty"), ["-x", "-\ty"]);
    }

    #[test]
    fn trailing_citations_stay_with_previous_sentence() {
        assert_eq!(
            split("It is red. [1] Next one."),
            ["It is red. [1]", "Next one."]
        );
        assert_eq!(
            split("Red. [1][2] [3, 4]  next"),
            ["Red. [1][2] [3, 4]", "next"]
        );
        assert_eq!(split("Red. [1]"), ["Red. [1]"]);
        assert_eq!(split("Red. [1] \n"), ["Red. [1]"]);
        // A newline, a non-citation or a glued character keeps the marker in front.
        assert_eq!(split("Red.\n[1] Next."), ["Red.", "[1] Next."]);
        assert_eq!(split("Red. [1]\n[2] Next."), ["Red. [1]", "[2] Next."]);
        assert_eq!(split("Red. [x] Next."), ["Red.", "[x] Next."]);
        assert_eq!(split("Red. [1]. Next."), ["Red.", "[1].", "Next."]);
        assert_eq!(split("Red. [0] Next."), ["Red.", "[0] Next."]);
    }

    #[test]
    fn offsets_are_char_indexes_and_trimmed() {
        let t: Vec<char> = "  Été fini.  Ça va!\n".chars().collect();
        assert_eq!(split_chars(&t), [(2, 11), (13, 19)]);
        assert!(split_chars(&[]).is_empty());
        assert!(split_chars(&[' ', '\n']).is_empty());
        assert_eq!(split_sentences("x"), [(0, 1)]);
    }

    #[test]
    fn abbreviation_word_extraction() {
        let w = |s: &str| ends_with_abbreviation(&s.chars().collect::<Vec<_>>());
        assert!(w("see e.g") && w("(Fig") && w("[\"etc") && w("A") && w("é") && w("x  "));
        assert!(!w("") && !w("  ") && !w("(") && !w("figure") && !w("1") && !w("ab"));
        assert!(!w("Approxi"));
    }
}

//! Whether an answer sentence says the opposite of the evidence it cites.
//!
//! Words are the `\w` runs of a text, case-folded. A text is **negated** when
//! a word is one of [`NEGATORS`] not directly followed by one of
//! [`COMPARATIVES`] ("no more than 5 days" is a limit, not a negation), or is
//! `t` right after an apostrophe (`'` or `’`) that directly follows a word
//! ending in `n` (`doesn't`, `can’t`). A leading `No,` is the negator `no`; a
//! leading `Yes,` adds nothing, so it is affirmative unless the rest is
//! negated. A text is **conditional** when a word is one of [`NEUTRAL`]
//! ("if", "unless", "only", "but"...): its polarity cannot be read off as one
//! bit, so conditional texts are never compared.
//!
//! The answer sentence's **content** is the set of [`stem`]s of its words of
//! at least 3 characters that are not stop words
//! ([`crate::evidence::STOP_WORDS`]), negators or `yes`, nor the stem of an
//! `n't` contraction (`doesn`). Each sentence of a cited block that is not
//! conditional is compared by the share of the content stems among its own
//! word stems; at least [`STRONG_SHARE`] (as `4 * shared >= 3 * content`,
//! exact) is a **strong** match. A **mismatch** is when at least one sentence
//! matches strongly and every strong one has the opposite polarity.

use std::collections::HashSet;

use crate::chars::{fold, word_spans};
use crate::evidence::STOP_WORDS;

pub const NEGATORS: [&str; 10] = [
    "not", "no", "never", "none", "nor", "neither", "cannot", "nothing", "nobody", "nowhere",
];

#[rustfmt::skip]
pub const COMPARATIVES: [&str; 12] = [
    "more", "less", "fewer", "later", "earlier", "greater", "sooner", "smaller", "larger",
    "higher", "lower", "than",
];

#[rustfmt::skip]
pub const NEUTRAL: [&str; 13] = [
    "if", "unless", "except", "without", "only", "otherwise", "whether", "but", "although",
    "though", "however", "whereas", "until",
];

/// Documented share for a strong match (the comparison itself is integral).
pub const STRONG_SHARE: f64 = 0.75;

const APOSTROPHES: [char; 2] = ['\'', '’'];

/// A crude suffix stripper: "handles", "handled", "handling" and "handle"
/// all become "handl"; "types" and "type" both "typ".
pub fn stem(word: &str) -> String {
    let chars: Vec<char> = word.chars().collect();
    let mut n = chars.len();
    for suffix in ["ing", "ed", "es", "s"] {
        let s: Vec<char> = suffix.chars().collect();
        if chars.ends_with(&s)
            && n - s.len() >= 3
            && !(suffix == "s" && chars.ends_with(&['s', 's']))
        {
            n -= s.len();
            break;
        }
    }
    if n >= 4 && chars[n - 1] == 'e' {
        n -= 1;
    }
    chars[..n].iter().collect()
}

/// The words of `t`: `(start, end, fold)`.
struct Words {
    runs: Vec<(usize, usize, String)>,
}

impl Words {
    fn of(t: &[char]) -> Self {
        let runs = word_spans(t).map(|(s, e)| (s, e, fold(&t[s..e]))).collect();
        Words { runs }
    }

    /// Whether the word at `index` is the `t` of an `n't` contraction.
    fn is_nt(&self, t: &[char], index: usize) -> bool {
        let (start, _, word) = &self.runs[index];
        index > 0 && word == "t" && *start >= 1 && APOSTROPHES.contains(&t[start - 1]) && {
            let (_, prev_end, prev) = &self.runs[index - 1];
            *prev_end + 1 == *start && prev.ends_with('n')
        }
    }

    fn negated(&self, t: &[char]) -> bool {
        (0..self.runs.len()).any(|i| {
            let word = self.runs[i].2.as_str();
            let limit = self
                .runs
                .get(i + 1)
                .is_some_and(|next| COMPARATIVES.contains(&next.2.as_str()));
            (NEGATORS.contains(&word) && !limit) || self.is_nt(t, i)
        })
    }

    fn conditional(&self) -> bool {
        self.runs
            .iter()
            .any(|(_, _, w)| NEUTRAL.contains(&w.as_str()))
    }
}

/// What is compared of one text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stance {
    pub stems: HashSet<String>,
    pub negated: bool,
    pub conditional: bool,
}

/// The answer side: content stems only (see the module docs).
pub fn answer_stance(t: &[char]) -> Stance {
    let words = Words::of(t);
    let mut stems = HashSet::new();
    for (i, (start, end, word)) in words.runs.iter().enumerate() {
        let contraction = i + 1 < words.runs.len() && words.is_nt(t, i + 1);
        if end - start >= 3
            && !STOP_WORDS.contains(&word.as_str())
            && !NEGATORS.contains(&word.as_str())
            && word != "yes"
            && !contraction
        {
            stems.insert(stem(word));
        }
    }
    Stance {
        stems,
        negated: words.negated(t),
        conditional: words.conditional(),
    }
}

/// The evidence side: the stems of every word.
pub fn evidence_stance(t: &[char]) -> Stance {
    let words = Words::of(t);
    let stems = words.runs.iter().map(|(_, _, w)| stem(w)).collect();
    Stance {
        stems,
        negated: words.negated(t),
        conditional: words.conditional(),
    }
}

/// How many content stems `evidence` shares, when it is a strong match.
pub fn strong_share(answer: &Stance, evidence: &Stance) -> Option<usize> {
    if evidence.conditional || answer.stems.is_empty() {
        return None;
    }
    let shared = answer
        .stems
        .iter()
        .filter(|s| evidence.stems.contains(*s))
        .count();
    (4 * shared >= 3 * answer.stems.len()).then_some(shared)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn stems() {
        for (w, s) in [
            ("handles", "handl"),
            ("handle", "handl"),
            ("handled", "handl"),
            ("handling", "handl"),
            ("types", "typ"),
            ("type", "typ"),
            ("class", "class"),
            ("classes", "class"),
            ("uses", "use"),
            ("use", "use"),
            ("does", "doe"),
            ("is", "is"),
            ("allowed", "allow"),
            ("assumed", "assum"),
            ("sing", "sing"),
            ("ée", "ée"),
        ] {
            assert_eq!(stem(w), s, "{w}");
        }
    }

    #[test]
    fn negation_rules() {
        let neg = |s: &str| answer_stance(&chars(s)).negated;
        assert!(
            neg("This version doesn't handle it.") && neg("It can’t.") && neg("No, it is fine.")
        );
        assert!(neg("It is NOT allowed") && neg("none of them") && neg("It cannot be sent"));
        assert!(
            !neg("Yes, it handles it.")
                && !neg("no more than 5 days")
                && !neg("Not later than May")
        );
        assert!(!neg("It's fine, 't") && !neg("don 't") && !neg("Notably, it works"));
        assert!(answer_stance(&chars("Only if asked")).conditional);
    }

    #[test]
    fn content_and_strong_matches() {
        let a = answer_stance(&chars("Yes, libtasn1 handles the REAL type [1]."));
        let want: HashSet<String> = ["libtasn1", "handl", "real", "typ"]
            .map(String::from)
            .into();
        assert_eq!(a.stems, want);
        assert!(!a.negated);
        let e = evidence_stance(&chars("This version doesn't handle the REAL type."));
        assert!(e.negated);
        assert_eq!(strong_share(&a, &e), Some(3));
        let weak = evidence_stance(&chars("The REAL type is rare."));
        assert_eq!(strong_share(&a, &weak), None);
        let cond = evidence_stance(&chars("If asked, libtasn1 handles the REAL type."));
        assert_eq!(strong_share(&a, &cond), None);
        let nt = answer_stance(&chars("It doesn't handle it"));
        assert!(!nt.stems.contains("doesn") && nt.stems.contains("handl"));
    }
}

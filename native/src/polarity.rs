//! Whether an answer sentence says the opposite of the evidence it cites.
//!
//! Words are the `\w` runs of a text, case-folded, each reduced to its
//! [`stem`]. A text is cut into **clauses** at `,` `;` `:` `(` `)` `[` `]`
//! `—` `–`, at `.` `!` `?` `…` followed by whitespace or the end, at a `-`
//! with whitespace on both sides, and before the words of [`SPLITTERS`]
//! ("because", "which", "but"...). A **negator** is a word of [`NEGATORS`],
//! or the `t` right after an apostrophe (`'`/`’`) right after a word ending
//! in `n` (`doesn't`); its **scope** is the rest of its clause. A negator is
//! a limit, not a negation, when a word of [`COMPARATIVES`] follows it in its
//! clause ("no more than 5 days"). A leading `No,` or `No.` is thereby a
//! clause of its own with an empty scope: the answer word answers the
//! question, and the claim after it is what is compared.
//!
//! A stem is **negated** in a text when every occurrence of it lies in a
//! negator's scope. A text holding a word of [`CONDITIONAL`] ("if", "when",
//! "unless", "only"...) is conditional: its polarity depends on a condition,
//! so it is never compared.
//!
//! The answer's **content** is its stems of words of 3+ characters that are
//! not stop words ([`crate::evidence::STOP_WORDS`]), negators, `yes`, the
//! stem before an `n't`, nor inside a name, identifier, code or quote fact
//! (the fact check covers those; polarity compares what is said of them). A
//! block sentence that is not conditional **matches strongly** when it holds
//! at least [`STRONG_SHARE`] of the content stems (`5 * shared >= 3 *
//! content`, exact). The pair *agrees* when no shared stem is negated on one
//! side only, or some shared stem is negated on both. Among the strong
//! matches sharing the most stems, the first agreeing one is reported, else
//! the first: a **mismatch** is when that one disagrees. The answer sentence
//! is compared in parts cut at `;` (each part its own claim).

use std::collections::HashMap;

use crate::chars::{fold, is_space, word_spans};
use crate::evidence::STOP_WORDS;

pub const NEGATORS: [&str; 10] = [
    "not", "no", "never", "none", "nor", "neither", "cannot", "nothing", "nobody", "nowhere",
];

#[rustfmt::skip]
pub const COMPARATIVES: [&str; 12] = [
    "more", "less", "fewer", "later", "earlier", "greater", "sooner", "smaller", "larger",
    "higher", "lower", "than",
];

pub const CONDITIONAL: [&str; 8] = [
    "if",
    "unless",
    "only",
    "otherwise",
    "whether",
    "until",
    "when",
    "whenever",
];

#[rustfmt::skip]
pub const SPLITTERS: [&str; 13] = [
    "but", "however", "although", "though", "whereas", "while", "because", "since", "except",
    "which", "who", "whom", "whose",
];

/// Documented share for a strong match (the comparison itself is integral).
pub const STRONG_SHARE: f64 = 0.6;

const APOSTROPHES: [char; 2] = ['\'', '’'];
const BREAK_MARKS: [char; 9] = [',', ';', ':', '(', ')', '[', ']', '—', '–'];
const STOPS: [char; 4] = ['.', '!', '?', '…'];

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

/// Whether the characters between two words end a clause.
fn breaks_clause(t: &[char], from: usize, to: usize) -> bool {
    (from..to).any(|k| {
        let c = t[k];
        BREAK_MARKS.contains(&c)
            || (STOPS.contains(&c) && t.get(k + 1).is_none_or(|&n| is_space(n)))
            || (c == '-'
                && k > 0
                && is_space(t[k - 1])
                && t.get(k + 1).is_some_and(|&n| is_space(n)))
    })
}

/// One word: where it is, its fold, its clause and whether a negator's
/// scope covers it.
struct Word {
    start: usize,
    end: usize,
    fold: String,
    negated: bool,
}

/// The words of `t` with clauses and negation scopes resolved.
fn words(t: &[char]) -> Vec<Word> {
    let spans: Vec<(usize, usize)> = word_spans(t).collect();
    let folds: Vec<String> = spans.iter().map(|&(s, e)| fold(&t[s..e])).collect();
    let mut clause = Vec::with_capacity(spans.len());
    let mut id = 0;
    for (i, &(start, _)) in spans.iter().enumerate() {
        let from = if i == 0 { 0 } else { spans[i - 1].1 };
        if i > 0 && (breaks_clause(t, from, start) || SPLITTERS.contains(&folds[i].as_str())) {
            id += 1;
        }
        clause.push(id);
    }
    let is_negator = |i: usize| {
        let (start, _) = spans[i];
        let nt = folds[i] == "t"
            && i > 0
            && start >= 1
            && APOSTROPHES.contains(&t[start - 1])
            && spans[i - 1].1 + 1 == start
            && folds[i - 1].ends_with('n');
        (NEGATORS.contains(&folds[i].as_str()) || nt)
            && !(i + 1..spans.len())
                .take_while(|&j| clause[j] == clause[i])
                .any(|j| COMPARATIVES.contains(&folds[j].as_str()))
    };
    let mut scope: Option<usize> = None;
    let mut negated = Vec::with_capacity(spans.len());
    for (i, &id) in clause.iter().enumerate() {
        negated.push(scope == Some(id));
        if is_negator(i) {
            scope = Some(id);
        }
    }
    spans
        .into_iter()
        .zip(folds)
        .zip(negated)
        .map(|(((start, end), fold), negated)| Word {
            start,
            end,
            fold,
            negated,
        })
        .collect()
}

/// What is compared of one text: each stem and whether it is negated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stance {
    pub stems: HashMap<String, bool>,
    pub conditional: bool,
}

fn stance_of(words: &[Word], keep: impl Fn(usize, &Word) -> bool) -> Stance {
    let mut stems: HashMap<String, bool> = HashMap::new();
    for (i, w) in words.iter().enumerate() {
        if keep(i, w) {
            let entry = stems.entry(stem(&w.fold)).or_insert(true);
            *entry &= w.negated;
        }
    }
    Stance {
        stems,
        conditional: words.iter().any(|w| CONDITIONAL.contains(&w.fold.as_str())),
    }
}

/// The answer side: content stems only; `facts` are the `(start, end)` spans
/// of its entity facts, whose words are not content.
pub fn answer_stance(t: &[char], facts: &[(usize, usize)]) -> Stance {
    let words = words(t);
    let contraction = |i: usize| {
        words.get(i + 1).is_some_and(|next| {
            next.fold == "t"
                && next.start == words[i].end + 1
                && APOSTROPHES.contains(&t[words[i].end])
        })
    };
    stance_of(&words, |i, w| {
        w.end - w.start >= 3
            && !STOP_WORDS.contains(&w.fold.as_str())
            && !NEGATORS.contains(&w.fold.as_str())
            && w.fold != "yes"
            && !contraction(i)
            && !facts.iter().any(|&(s, e)| s <= w.start && w.end <= e)
    })
}

/// The evidence side: the stems of every word.
pub fn evidence_stance(t: &[char]) -> Stance {
    stance_of(&words(t), |_, _| true)
}

/// A strong match of `evidence` with `answer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match {
    /// How many content stems the evidence holds.
    pub shared: usize,
    /// Whether each side negates some shared stem.
    pub answer_negated: bool,
    pub evidence_negated: bool,
    /// Whether they agree: no shared stem's negation differs, or some shared
    /// stem is negated on both sides.
    pub agrees: bool,
}

/// The strong match of `evidence` with `answer`, if it is one.
pub fn strong_match(answer: &Stance, evidence: &Stance) -> Option<Match> {
    if answer.conditional || evidence.conditional || answer.stems.is_empty() {
        return None;
    }
    let (mut shared, mut answer_negated, mut evidence_negated) = (0, false, false);
    let (mut differ, mut both) = (false, false);
    for (s, &negated) in &answer.stems {
        if let Some(&other) = evidence.stems.get(s) {
            shared += 1;
            answer_negated |= negated;
            evidence_negated |= other;
            differ |= negated != other;
            both |= negated && other;
        }
    }
    (5 * shared >= 3 * answer.stems.len()).then_some(Match {
        shared,
        answer_negated,
        evidence_negated,
        agrees: both || !differ,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    fn compare(answer: &str, evidence: &str) -> Option<(usize, bool, bool, bool)> {
        strong_match(
            &answer_stance(&chars(answer), &[]),
            &evidence_stance(&chars(evidence)),
        )
        .map(|m| (m.shared, m.answer_negated, m.evidence_negated, m.agrees))
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
    fn negation_scopes() {
        let negated = |s: &str| -> Vec<String> {
            words(&chars(s))
                .into_iter()
                .filter(|w| w.negated)
                .map(|w| w.fold)
                .collect()
        };
        assert_eq!(
            negated("This version doesn't handle the REAL type."),
            ["handle", "the", "real", "type"]
        );
        assert_eq!(negated("No, it is fine. No. It is"), Vec::<String>::new());
        assert_eq!(negated("It is NOT allowed, said he"), ["allowed"]);
        assert_eq!(
            negated("It uses X because it sets no size, while Y"),
            ["size"]
        );
        assert_eq!(
            negated("no more than 5 days; not later than May"),
            Vec::<String>::new()
        );
        assert_eq!(negated("It can’t go - back"), ["go"]);
        assert_eq!(negated("don 't x, isn't y"), ["y"]);
        assert_eq!(negated("not e.g. x"), ["e", "g"]);
        assert_eq!(negated("not x. y"), ["x"]);
    }

    #[test]
    fn issue_examples() {
        // "Yes, libtasn1 handles" against "doesn't handle": only the evidence negates.
        assert_eq!(
            compare(
                "Yes, libtasn1 handles the REAL type",
                "This version doesn't handle the REAL type."
            ),
            Some((2, false, true, false)) // handl, real ("type" is a lexicon stop word)
        );
        assert_eq!(
            compare(
                "The endpoint MUST NOT send it",
                "An endpoint MUST NOT send a PING frame."
            ),
            Some((2, true, true, true))
        );
        // Negating different shared stems is a disagreement; sharing one is not.
        assert_eq!(
            compare(
                "An index is created, so search is not a scan",
                "No index is created, so search is a scan"
            ),
            Some((4, true, true, false))
        );
        assert_eq!(
            compare(
                "It must not send frames",
                "It must not send, in this state, frames"
            ),
            Some((2, true, true, true))
        );
        // A stem negated in one place and not in another is not negated.
        assert_eq!(
            compare(
                "It uses the default chunk_size",
                "It uses the default chunk_size because X sets no chunk_size"
            ),
            Some((2, false, false, true))
        );
        // Conditional sentences are not compared; weak matches are not either.
        assert_eq!(
            compare("Leave is paid out", "Leave is not paid out unless approved"),
            None
        );
        assert_eq!(compare("Leave is paid out in cash", "Cash is king"), None);
    }

    #[test]
    fn content_excludes_facts_and_contractions() {
        let t = chars("MegaCorp doesn't handle the REAL type");
        let a = answer_stance(&t, &[(0, 8)]);
        let mut keys: Vec<_> = a.stems.keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, ["handl", "real"]); // "type" is a stop word of the common lexicon
        assert!(a.stems["handl"] && !a.conditional);
    }
}

//! The facts one answer sentence asserts, found in the order they are written.
//!
//! The sentence is first *prepared*: its citation markers are blanked (each
//! character becomes a space, so offsets stay put), and so is a list marker at
//! the start of each of its lines (after spaces): `-`, `*`, `•` or `+`; 1-3
//! ASCII digits then `.` or `)`; `(` + 1-3 ASCII letters or digits + `)`; one
//! ASCII letter then `)` - each followed by whitespace. Then, on that text:
//!
//! 1. **code**: `` `...` `` up to the next backtick (an unmatched one ends the
//!    scan); the span, marks included, is blanked.
//! 2. **quote**: double-quoted spans exactly as `validate_citations` finds
//!    them, scanned on the text left by step 1; shorter than
//!    `min_quote_chars` with a word character inside -> a fact; every quote is
//!    blanked (longer ones are `validate_citations`' to check).
//! 3. a left-to-right scan over the starts of `\w` runs of what is left:
//!    * a **date** ([`crate::dates`]);
//!    * a **hex literal** `0x…` ([`crate::block_numbers::hex_literal`]): a
//!      number whose one value is the literal's (`0x00` is 0, `0xff` 255),
//!      or an identifier when it is not all hex digits or too long;
//!    * at an ASCII digit: a numeral ([`crate::numbers`]) with its glued
//!      letters; when a `\w` character, or `.` and a `\w` character, follows
//!      those letters the whole run is an **identifier** (`1.2.3`, `0x0a`),
//!      otherwise a **number** (its span takes a currency symbol right before
//!      it, a scale word after it, or a `%`);
//!    * an **identifier**: a token `\w+([.-]\w+)*` holding `_` (with a
//!      letter or digit), an ASCII digit, a `.`-separated part of 2+
//!      characters, or a `-` followed by an upper-case letter
//!      (`Content-Length`, `TS-71`);
//!    * else a **name**, the `\w` run: CamelCase (a letter that is not
//!      upper-case followed by an upper-case one: `TechCorp`, `iOS`) always;
//!      otherwise when it has 2+ characters, starts upper-case and its fold is
//!      not in [`NOT_NAMES`], unless it *starts* the sentence: it is the
//!      first token, the first on a line, or right after `:` `.` `!` `?` `…`
//!      (looking back over spaces and `(["'“‘*#`) - then only when a
//!      possessive `'s` follows it or, after spaces or `&`, another word that
//!      would be a name (`Meridian Coffee Systems`, `Hooli's`).

use crate::block_numbers::hex_literal;
use crate::chars::{fold, is_alpha, is_space, is_upper_word, is_word};
use crate::dates::{date_at, Date};
use crate::markers::for_each_marker;
use crate::numbers::{is_digit, letters_end, numeral_values, parse_numeral, word_end};
use crate::validate::quotes;

/// Case-folded capitalised words that are not names: answer words, function
/// words, month and day names (dates' words), RFC 2119 keywords, currency
/// codes, units, titles and the words of document structure.
#[rustfmt::skip]
pub const NOT_NAMES: [&str; 165] = [
    "i", "yes", "no", "not", "note", "ok", "okay", "a", "an", "the", "and", "or", "but", "nor",
    "if", "in", "on", "at", "of", "for", "to", "by", "with", "from", "as", "into", "per", "via",
    "it", "its", "this", "that", "these", "those", "there", "here", "they", "we", "you", "he",
    "she", "his", "her", "their", "our", "your", "my", "however", "also", "both", "each", "all",
    "any", "some", "such", "thus", "then", "when", "where", "while", "which", "who", "what",
    "why", "how", "is", "are", "was", "were", "be", "do", "does",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday",
    "must", "shall", "should", "required", "recommended", "optional",
    "usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "cny", "inr", "us",
    "kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib", "hz", "khz", "mhz", "ghz", "ms",
    "mr", "mrs", "dr", "prof",
    "section", "chapter", "page", "pages", "table", "figure", "fig", "appendix", "exhibit",
    "article", "clause", "paragraph", "step", "answer", "summary", "source", "sources",
    "block", "passage", "document", "memo", "report", "letter", "policy", "manual", "handbook",
    "agreement", "checklist", "schedule",
];

const CURRENCY: [char; 5] = ['$', '€', '£', '¥', '₹'];
const LOOK_BACK_SKIP: [char; 8] = ['(', '[', '"', '\'', '“', '‘', '*', '#'];
const BREAKS: [char; 5] = [':', '.', '!', '?', '…'];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Number,
    Date,
    Identifier,
    Code,
    Quote,
    Name,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Number => "number",
            Kind::Date => "date",
            Kind::Identifier => "identifier",
            Kind::Code => "code",
            Kind::Quote => "quote",
            Kind::Name => "name",
        }
    }
}

/// What a block must hold for a fact to be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// Any of these canonical values among the block's numbers.
    Values(Vec<String>),
    Date(Date),
    /// A substring of the block's search text (already normalised).
    Text(String),
    /// A case-folded word at a word start of the block's search text.
    Name(String),
    /// A whole token of the block's search text (no letter or digit on either
    /// side): an identifier, so a truncated hash or version ("0x3876…ccbb",
    /// "v2") is not found inside a longer one ("0x3876…ccbb7f0a", "v2.1").
    Token(String),
}

/// One fact; offsets index the sentence's characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
    pub key: Key,
}

/// Whitespace-normalised, case-folded text with soft hyphens dropped and
/// line-break hyphenation joined: a `-` after a letter, followed by
/// whitespace holding a `\n` and then a letter that is not upper-case, is
/// removed with that whitespace ("trans-\nport" -> "transport").
pub fn search_text(chars: &[char]) -> String {
    let v: Vec<char> = chars.iter().copied().filter(|&c| c != '\u{ad}').collect();
    let mut out = Vec::with_capacity(v.len());
    let mut k = 0;
    while k < v.len() {
        if v[k] == '-' && k > 0 && is_alpha(v[k - 1]) {
            let mut m = k + 1;
            let mut newline = false;
            while m < v.len() && is_space(v[m]) {
                newline |= v[m] == '\n';
                m += 1;
            }
            if newline && m < v.len() && is_alpha(v[m]) && !is_upper_word(v[m]) {
                k = m;
                continue;
            }
        }
        out.push(v[k]);
        k += 1;
    }
    crate::chars::normalise(out)
}

/// End of the list marker starting at `j`, if one is there.
fn list_marker_end(p: &[char], j: usize) -> Option<usize> {
    let c = *p.get(j)?;
    let end = if matches!(c, '-' | '*' | '•' | '+') {
        j + 1
    } else if c.is_ascii_digit() {
        let e = crate::numbers::run_end(p, j, is_digit);
        (e - j <= 3 && matches!(p.get(e), Some('.' | ')'))).then_some(e + 1)?
    } else if c == '(' {
        let e = crate::numbers::run_end(p, j + 1, |c| c.is_ascii_alphanumeric());
        ((1..=3).contains(&(e - j - 1)) && p.get(e) == Some(&')')).then_some(e + 1)?
    } else if c.is_ascii_alphabetic() && p.get(j + 1) == Some(&')') {
        j + 2
    } else {
        return None;
    };
    p.get(end).is_some_and(|&c| is_space(c)).then_some(end)
}

/// The sentence with markers and list markers blanked.
pub fn prepare(t: &[char]) -> Vec<char> {
    let mut p = t.to_vec();
    for_each_marker(t, |start, end, _| p[start..end].fill(' '));
    let mut line = 0;
    loop {
        let j = crate::numbers::run_end(&p, line, |c| c != '\n' && is_space(c));
        if let Some(end) = list_marker_end(&p, j) {
            p[j..end].fill(' ');
        }
        match p[line..].iter().position(|&c| c == '\n') {
            Some(offset) => line += offset + 1,
            None => break,
        }
    }
    p
}

/// Extends a token: `\w` characters, and `.` (and `-` when `hyphens`)
/// followed by a `\w` character.
fn token_end(w: &[char], mut k: usize, hyphens: bool) -> usize {
    while k < w.len() {
        if is_word(w[k]) {
            k += 1;
        } else if (w[k] == '.' || (hyphens && w[k] == '-'))
            && w.get(k + 1).is_some_and(|&c| is_word(c))
        {
            k += 2;
        } else {
            break;
        }
    }
    k
}

fn is_identifier(token: &[char]) -> bool {
    let alnum = token.iter().any(|&c| is_word(c) && c != '_');
    let dotted = token.contains(&'.') && token.split(|&c| c == '.').any(|p| p.len() >= 2);
    (token.contains(&'_') && alnum)
        || token.iter().any(|&c| is_digit(c))
        || dotted
        || token.windows(2).any(|w| w[0] == '-' && is_upper_word(w[1]))
}

fn is_camel(word: &[char]) -> bool {
    word.windows(2)
        .any(|w| is_alpha(w[0]) && !is_upper_word(w[0]) && is_upper_word(w[1]))
}

/// Whether the `\w` run `w[i..r]` could be a name by its letters alone.
fn name_like(w: &[char], i: usize, r: usize) -> bool {
    r - i >= 2 && is_upper_word(w[i]) && !NOT_NAMES.contains(&fold(&w[i..r]).as_str())
}

/// Whether a name at the start of a sentence is marked as one: a possessive
/// `'s`, or another name-like word after spaces or `&`.
fn marked_name(w: &[char], r: usize) -> bool {
    let possessive = w.get(r).is_some_and(|c| ['\'', '’'].contains(c))
        && w.get(r + 1) == Some(&'s')
        && !w.get(r + 2).is_some_and(|&c| is_word(c));
    let k = crate::numbers::run_end(w, r, |c| is_space(c) || c == '&');
    possessive || (k > r && k < w.len() && is_word(w[k]) && name_like(w, k, word_end(w, k)))
}

/// Whether the token at `i` starts the sentence (see the module docs).
fn at_start(w: &[char], i: usize) -> bool {
    let mut k = i;
    while k > 0 {
        let c = w[k - 1];
        if c == '\n' {
            return true;
        }
        if !(is_space(c) || LOOK_BACK_SKIP.contains(&c)) {
            return BREAKS.contains(&c);
        }
        k -= 1;
    }
    true
}

fn text_key(t: &[char]) -> Key {
    Key::Text(search_text(t))
}

fn identifier(t: &[char], start: usize, end: usize) -> Fact {
    Fact {
        kind: Kind::Identifier,
        start,
        end,
        key: Key::Token(search_text(&t[start..end])),
    }
}

/// The facts of a sentence already [`prepare`]d, in written order (needles
/// come from the prepared text, so a marker inside a quote does not count).
pub fn sentence_facts(t: &[char], min_quote_chars: usize) -> Vec<Fact> {
    let mut w = t.to_vec();
    let mut facts = Vec::new();
    // 1. code spans
    let mut p = 0;
    while let Some(open) = w[p..].iter().position(|&c| c == '`').map(|o| p + o) {
        let Some(close) = w[open + 1..]
            .iter()
            .position(|&c| c == '`')
            .map(|o| open + 1 + o)
        else {
            break;
        };
        let needle = search_text(&t[open + 1..close]);
        if !needle.is_empty() {
            facts.push(Fact {
                kind: Kind::Code,
                start: open + 1,
                end: close,
                key: Key::Text(needle),
            });
        }
        w[open..=close].fill(' ');
        p = close + 1;
    }
    // 2. quoted terms
    for (start, end) in quotes(&w) {
        if end - start < min_quote_chars && t[start..end].iter().any(|&c| is_word(c)) {
            facts.push(Fact {
                kind: Kind::Quote,
                start,
                end,
                key: text_key(&t[start..end]),
            });
        }
        w[start - 1..=end].fill(' ');
    }
    // 3. dates, numbers, identifiers and names
    let mut seen_token = false;
    let mut i = 0;
    while i < w.len() {
        if !is_word(w[i]) {
            i += 1;
            continue;
        }
        let starts = !seen_token || at_start(&w, i);
        seen_token = true;
        if let Some((end, date)) = date_at(&w, i) {
            facts.push(Fact {
                kind: Kind::Date,
                start: i,
                end,
                key: Key::Date(date),
            });
            i = end;
            continue;
        }
        if let Some(value) = hex_literal(&w, i) {
            let end = word_end(&w, i);
            facts.push(match value {
                Some(v) => Fact {
                    kind: Kind::Number,
                    start: i,
                    end,
                    key: Key::Values(vec![v.to_string()]),
                },
                None => identifier(t, i, end),
            });
            i = end;
            continue;
        }
        if is_digit(w[i]) {
            let num = parse_numeral(&w, i);
            let s = letters_end(&w, num.end);
            let glued = w.get(s).is_some_and(|&c| is_word(c))
                || (w.get(s) == Some(&'.') && w.get(s + 1).is_some_and(|&c| is_word(c)));
            if glued {
                let end = token_end(&w, s, false);
                facts.push(identifier(t, i, end));
                i = end;
            } else {
                let (values, end) = numeral_values(&w, &num, s);
                let start = if i > 0 && CURRENCY.contains(&w[i - 1]) {
                    i - 1
                } else {
                    i
                };
                facts.push(Fact {
                    kind: Kind::Number,
                    start,
                    end,
                    key: Key::Values(values),
                });
                i = end;
            }
            continue;
        }
        let end = token_end(&w, i, true);
        if is_identifier(&w[i..end]) {
            facts.push(identifier(t, i, end));
            i = end;
            continue;
        }
        let r = word_end(&w, i);
        if is_camel(&w[i..r]) || (name_like(&w, i, r) && (!starts || marked_name(&w, r))) {
            facts.push(Fact {
                kind: Kind::Name,
                start: i,
                end: r,
                key: Key::Name(fold(&w[i..r])),
            });
        }
        i = r;
    }
    facts.sort_by_key(|f| f.start);
    facts
}

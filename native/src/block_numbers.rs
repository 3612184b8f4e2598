//! The values a block mentions, for finding an answer's numbers in it.
//!
//! The block side is lenient, because a number the block does hold must never
//! be reported missing: every numeral ([`crate::numbers`]) counts with and
//! without its scale, and so do number words - "three" is 3, "twenty-five"
//! 25, "five million" 5,000,000 - so that digits in the answer are found in a
//! block that spells them out (in an answer a number word is not a fact:
//! "one of the parties" asserts no number). Digits inside a number (`3.3.1`)
//! and page numbers (`p. 2`, as in a block's label) are not values.

use std::collections::HashSet;

use crate::chars::{fold, is_space, is_word};
use crate::numbers::{
    canonical, is_digit, letters_end, numeral_values, parse_numeral, run_end, scale_of, word_end,
};

/// Number words a block may use for a value the answer writes in digits.
#[rustfmt::skip]
pub const NUMBER_WORDS: [(&str, u64); 46] = [
    ("zero", 0), ("one", 1), ("two", 2), ("three", 3), ("four", 4), ("five", 5), ("six", 6),
    ("seven", 7), ("eight", 8), ("nine", 9), ("ten", 10), ("eleven", 11), ("twelve", 12),
    ("thirteen", 13), ("fourteen", 14), ("fifteen", 15), ("sixteen", 16), ("seventeen", 17),
    ("eighteen", 18), ("nineteen", 19), ("twenty", 20), ("thirty", 30), ("forty", 40),
    ("fifty", 50), ("sixty", 60), ("seventy", 70), ("eighty", 80), ("ninety", 90),
    ("hundred", 100), ("thousand", 1000), ("million", 1_000_000), ("billion", 1_000_000_000),
    ("dozen", 12), ("once", 1), ("twice", 2), ("single", 1), ("double", 2), ("triple", 3),
    ("first", 1), ("second", 2), ("third", 3), ("fourth", 4), ("fifth", 5), ("sixth", 6),
    ("seventh", 7), ("eighth", 8),
];

/// Cardinal units that may follow a tens word (`twenty-five`, `thirty one`).
pub const UNITS: [&str; 9] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
];

/// The value of a folded number word.
pub fn word_value(folded: &str) -> Option<u64> {
    NUMBER_WORDS
        .iter()
        .find(|(w, _)| *w == folded)
        .map(|&(_, v)| v)
}

/// Whether a numeral starts at `p`: a digit that does not continue a number
/// (after a digit, or after a `.`/`,` that follows a digit).
pub fn numeral_starts(t: &[char], p: usize) -> bool {
    is_digit(t[p])
        && !(p > 0 && is_digit(t[p - 1]))
        && !(p > 1 && matches!(t[p - 1], '.' | ',') && is_digit(t[p - 2]))
}

/// Whether the numeral at `p` is a page number: right after `p.` or `pp.`
/// (any case, starting a word), spaces allowed in between - as in the
/// `[3] report.pdf, p. 2` label of a block.
pub fn is_page_number(t: &[char], p: usize) -> bool {
    let j = (0..p).rev().find(|&k| !is_space(t[k])).map_or(0, |k| k + 1);
    if j < 2 || t[j - 1] != '.' || !matches!(t[j - 2], 'p' | 'P') {
        return false;
    }
    let k = if j >= 3 && matches!(t[j - 3], 'p' | 'P') {
        j - 3
    } else {
        j - 2
    };
    k == 0 || !is_word(t[k - 1])
}

/// Every value a block mentions: each numeral with and without its scale,
/// and number words (with a following unit for tens, and with a following
/// scale word); page numbers are not values.
pub fn block_values(t: &[char], out: &mut HashSet<String>) {
    for p in 0..t.len() {
        if !numeral_starts(t, p) || is_page_number(t, p) {
            continue;
        }
        if let Some(value) = hex_literal(t, p) {
            out.extend(value.map(|v| v.to_string()));
            continue;
        }
        let num = parse_numeral(t, p);
        let s = letters_end(t, num.end);
        let (values, _) = numeral_values(t, &num, s);
        out.extend(values);
        out.insert(canonical(&num.int, &num.frac, 0));
    }
    let mut a = 0;
    while a < t.len() {
        if !is_word(t[a]) {
            a += 1;
            continue;
        }
        let r = word_end(t, a);
        if let Some(v) = word_value(&fold(&t[a..r])) {
            number_word_values(t, v, r, out);
        }
        a = r;
    }
}

/// A `0x…` literal at `p`: `Some(its value)`, or `Some(None)` when it is a
/// hex word too long (a hash) or not all hex digits (an identifier). Either
/// way it is not the numeral 0 followed by letters: "0xff" must not back an
/// answer's "0".
pub fn hex_literal(t: &[char], p: usize) -> Option<Option<u128>> {
    if t[p] != '0' || !matches!(t.get(p + 1), Some('x' | 'X')) {
        return None;
    }
    if !t.get(p + 2).is_some_and(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let r = word_end(t, p);
    let digits: String = t[p + 2..r].iter().collect();
    if !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return Some(None);
    }
    Some(u128::from_str_radix(&digits, 16).ok())
}

/// Values of the number word `v` ending at `r`: itself, a tens-unit
/// compound, and either scaled by a following scale word.
pub fn number_word_values(t: &[char], v: u64, r: usize, out: &mut HashSet<String>) {
    out.insert(v.to_string());
    let mut value = v;
    let mut end = r;
    if (20..=90).contains(&v) && v % 10 == 0 {
        let k = if t.get(r) == Some(&'-') {
            r + 1
        } else {
            run_end(t, r, is_space)
        };
        if k > r && k < t.len() && is_word(t[k]) {
            let rr = word_end(t, k);
            let unit = fold(&t[k..rr]);
            if let Some(u) = UNITS.iter().position(|w| *w == unit) {
                value = v + u as u64 + 1;
                end = rr;
                out.insert(value.to_string());
            }
        }
    }
    let k = run_end(t, end, is_space);
    if k > end && k < t.len() && is_word(t[k]) {
        let rr = word_end(t, k);
        if let Some((shift, true)) = scale_of(&t[k..rr]) {
            out.insert(canonical(&value.to_string(), "", shift));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(s: &str) -> HashSet<String> {
        let mut out = HashSet::new();
        block_values(&s.chars().collect::<Vec<_>>(), &mut out);
        out
    }

    #[test]
    fn block_side_is_lenient() {
        let b = block("a fee of USD 45,000,000 and thirty (30) days, twenty-five or 1.234");
        for v in ["45000000", "30", "25", "20", "5", "1.234"] {
            assert!(b.contains(v), "{v} in {b:?}");
        }
        // Digits inside a number (after a digit and a `.`/`,`) start nothing.
        for v in ["45", "0", "1", "234"] {
            assert!(!b.contains(v), "{v} not in {b:?}");
        }
        let b = block(
            "[2] a.pdf, p. 7 and pp.8; App. 9, p 10; five million units; TLS1.3; 45 m; 3.3.1",
        );
        for v in ["7", "8"] {
            assert!(!b.contains(v), "{v} not in {b:?}");
        }
        for v in ["9", "10", "2"] {
            assert!(b.contains(v), "{v} in {b:?}");
        }
        for v in ["5", "5000000", "1.3", "45", "45000000", "3.3"] {
            assert!(b.contains(v), "{v} in {b:?}");
        }
    }

    #[test]
    fn hex_literal_is_its_own_value_not_zero() {
        let b = block("type 0x00; mask 0xff; 0x41 reserved; id 0x3f9z; salt 0x0dede3def700a6db819381be6e269dcbf9bd2ed9");
        for v in ["0", "255", "65"] {
            assert!(b.contains(v), "{v} in {b:?}");
        }
        assert!(!block("mask 0xff and 0x41 and 0x3f9z").contains("0"));
    }
}

//! Numbers written in an answer or a block, as canonical decimal strings.
//!
//! Why strings: "45 million", "45,000,000" and "$45M" must compare equal, and
//! so must "3.50" and "3.5"; a canonical decimal (no leading zeros in the
//! integer part, no trailing zeros in the fraction, `.` only when there is a
//! fraction) is exact for every length, where floats are not.
//!
//! A *numeral* starts at an ASCII digit (digits are ASCII only):
//!
//! * integer part: the digit run; when it has 1 to 3 digits it may continue
//!   with groups of exactly 3 digits (a group is not followed by a digit)
//!   after `,` (one or more groups), or else after one of U+0020, U+00A0,
//!   U+2009, U+202F (one or more), or else after `.` (two or more groups:
//!   `45.000` is a decimal, `45.000.000` an integer);
//! * fraction: `.` then a digit run (`,` instead of `.` after `.` grouping).
//!
//! Then a *scale*: the letters glued to the numeral (`45M`, `10k`, `5bn`), or
//! when nothing is glued, the next word after whitespace (`45 million`):
//! `k`/`K` (x10^3), `m`/`M` (x10^6), `b`/`B` (x10^9) are ambiguous (metres,
//! bytes), so the value both with and without the scale is a candidate; the
//! words `hundred`, `thousand`, `million`, `billion`, `trillion`, `bn`, `mn`
//! (any case) are sure, so only the scaled value is. Other glued letters
//! (`5ms`, `1st`, `10GB`) are a unit: the value is unscaled. Percent signs and
//! currency symbols are not part of the value (`12%` = `12 percent` = 12).
//! What a block holds is read by [`crate::block_numbers`].

use crate::chars::{fold, is_alpha, is_space, is_word};

/// Separators of digit groups written with spaces (`45 000 000`).
const GROUP_SPACES: [char; 4] = [' ', '\u{a0}', '\u{2009}', '\u{202f}'];

/// Scale words (folded) and their power of ten.
const SCALE_WORDS: [(&str, usize); 7] = [
    ("hundred", 2),
    ("thousand", 3),
    ("million", 6),
    ("billion", 9),
    ("trillion", 12),
    ("bn", 9),
    ("mn", 6),
];

#[inline]
pub fn is_digit(c: char) -> bool {
    c.is_ascii_digit()
}

/// End of the run of characters satisfying `pred` starting at `i`.
pub fn run_end(t: &[char], i: usize, pred: impl Fn(char) -> bool) -> usize {
    let mut j = i;
    while j < t.len() && pred(t[j]) {
        j += 1;
    }
    j
}

/// End of the `\w` run starting at `i`.
pub fn word_end(t: &[char], i: usize) -> usize {
    run_end(t, i, is_word)
}

/// The canonical decimal of `int.frac` multiplied by `10^shift`.
pub fn canonical(int: &str, frac: &str, shift: usize) -> String {
    let mut digits: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    let point = int.len() + shift;
    while digits.len() < point {
        digits.push(b'0');
    }
    let (whole, rest) = digits.split_at(point);
    let lead = whole.iter().take_while(|&&d| d == b'0').count();
    let whole = &whole[lead..];
    let trail = rest.iter().rev().take_while(|&&d| d == b'0').count();
    let rest = &rest[..rest.len() - trail];
    let mut out = String::with_capacity(whole.len() + rest.len() + 2);
    if whole.is_empty() {
        out.push('0');
    }
    out.extend(whole.iter().map(|&d| d as char));
    if !rest.is_empty() {
        out.push('.');
        out.extend(rest.iter().map(|&d| d as char));
    }
    out
}

/// A numeral's digits: `int` and `frac` are ASCII digit strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numeral {
    pub int: String,
    pub frac: String,
    /// Index just past the numeral (before any scale or unit).
    pub end: usize,
}

/// Groups of exactly three digits after a separator, from `j`: their digits
/// appended to `int`, how many, and where they end.
fn groups(t: &[char], j: usize, sep: impl Fn(char) -> bool, int: &mut String) -> (usize, usize) {
    let mut k = j;
    let mut count = 0;
    while k + 3 < t.len()
        && sep(t[k])
        && t[k + 1..k + 4].iter().all(|&c| is_digit(c))
        && !t.get(k + 4).is_some_and(|&c| is_digit(c))
    {
        int.extend(&t[k + 1..k + 4]);
        k += 4;
        count += 1;
    }
    (count, k)
}

/// Parse the numeral at `t[i]` (an ASCII digit); see the module docs.
pub fn parse_numeral(t: &[char], i: usize) -> Numeral {
    let mut j = run_end(t, i, is_digit);
    let mut int: String = t[i..j].iter().collect();
    let mut decimal = '.';
    if j - i <= 3 {
        let mut grouped = String::new();
        let (n, k) = groups(t, j, |c| c == ',', &mut grouped);
        if n >= 1 {
            j = k;
            int.push_str(&grouped);
        } else {
            let (n, k) = groups(t, j, |c| GROUP_SPACES.contains(&c), &mut grouped);
            if n >= 1 {
                j = k;
                int.push_str(&grouped);
            } else {
                let (n, k) = groups(t, j, |c| c == '.', &mut grouped);
                if n >= 2 {
                    j = k;
                    int.push_str(&grouped);
                    decimal = ',';
                }
            }
        }
    }
    let mut frac = String::new();
    if t.get(j) == Some(&decimal) && t.get(j + 1).is_some_and(|&c| is_digit(c)) {
        let e = run_end(t, j + 1, is_digit);
        frac = t[j + 1..e].iter().collect();
        j = e;
    }
    Numeral { int, frac, end: j }
}

/// How a word scales the number before it: `(power of ten, sure)`.
pub fn scale_of(word: &[char]) -> Option<(usize, bool)> {
    let ambiguous = match word {
        ['k' | 'K'] => Some(3),
        ['m' | 'M'] => Some(6),
        ['b' | 'B'] => Some(9),
        _ => None,
    };
    if let Some(shift) = ambiguous {
        return Some((shift, false));
    }
    let folded = fold(word);
    SCALE_WORDS
        .iter()
        .find(|(w, _)| *w == folded)
        .map(|&(_, shift)| (shift, true))
}

/// End of the letters (`str.isalpha`) glued to a numeral ending at `e`.
pub fn letters_end(t: &[char], e: usize) -> usize {
    run_end(t, e, is_alpha)
}

/// The candidate values of `num` and the end of its span, given `s`, the end
/// of the letters glued to it (`s == num.end` when there are none).
pub fn numeral_values(t: &[char], num: &Numeral, s: usize) -> (Vec<String>, usize) {
    let raw = canonical(&num.int, &num.frac, 0);
    let (scale, end) = if s > num.end {
        (scale_of(&t[num.end..s]), s)
    } else {
        let k = run_end(t, num.end, is_space);
        let word = if k > num.end && k < t.len() && is_word(t[k]) {
            let r = word_end(t, k);
            scale_of(&t[k..r]).map(|scale| (scale, r))
        } else {
            None
        };
        match word {
            Some((scale, r)) => (Some(scale), r),
            None if t.get(num.end) == Some(&'%') => (None, num.end + 1),
            None => (None, percent_end(t, num.end, k)),
        }
    };
    let mut values = Vec::with_capacity(2);
    match scale {
        None => values.push(raw),
        Some((shift, sure)) => {
            let scaled = canonical(&num.int, &num.frac, shift);
            if !sure && scaled != raw {
                values.push(raw);
            }
            values.push(scaled);
        }
    }
    (values, end)
}

/// End of a `percent` or `per cent` (any case) starting at `k`, after the
/// whitespace following a numeral that ends at `e`; `e` when there is none.
fn percent_end(t: &[char], e: usize, k: usize) -> usize {
    if k == e || k >= t.len() || !is_word(t[k]) {
        return e;
    }
    let r = word_end(t, k);
    match fold(&t[k..r]).as_str() {
        "percent" => r,
        "per" => {
            let c = run_end(t, r, is_space);
            let rc = word_end(t, c);
            if c > r && fold(&t[c..rc]) == "cent" {
                rc
            } else {
                e
            }
        }
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    fn values(s: &str) -> (Vec<String>, usize) {
        let t = chars(s);
        let num = parse_numeral(&t, 0);
        let e = letters_end(&t, num.end);
        numeral_values(&t, &num, e)
    }

    #[test]
    fn canonical_form() {
        assert_eq!(canonical("045", "500", 0), "45.5");
        assert_eq!(canonical("0", "0", 0), "0");
        assert_eq!(canonical("", "", 3), "0");
        assert_eq!(canonical("1", "5", 9), "1500000000");
        assert_eq!(canonical("1", "23456", 3), "1234.56");
        assert_eq!(canonical("000", "", 0), "0");
    }

    #[test]
    fn grouping_and_decimals() {
        let v = |s: &str| values(s).0;
        assert_eq!(v("45,000,000 USD"), ["45000000"]);
        assert_eq!(v("45 000 000"), ["45000000"]);
        assert_eq!(v("45.000.000,5"), ["45000000.5"]);
        assert_eq!(v("45.000"), ["45"]);
        assert_eq!(v("1,2,3"), ["1"]);
        assert_eq!(v("1234,567"), ["1234"]);
        assert_eq!(v("3.50."), ["3.5"]);
        assert_eq!(v("12,3456"), ["12"]);
        assert_eq!(v("2024 100"), ["2024"]);
    }

    #[test]
    fn scales_units_and_percent() {
        assert_eq!(values("45 million."), (vec!["45000000".into()], 10));
        assert_eq!(values("45M"), (vec!["45".into(), "45000000".into()], 3));
        assert_eq!(values("1.5bn"), (vec!["1500000000".into()], 5));
        assert_eq!(values("0k"), (vec!["0".into()], 2));
        assert_eq!(values("5ms"), (vec!["5".into()], 3));
        assert_eq!(values("12%"), (vec!["12".into()], 3));
        assert_eq!(values("12 percent"), (vec!["12".into()], 10));
        assert_eq!(values("12 Per  cent."), (vec!["12".into()], 12));
        assert_eq!(values("12 per centre"), (vec!["12".into()], 2));
        assert_eq!(values("2 Thousand"), (vec!["2000".into()], 10));
    }
}

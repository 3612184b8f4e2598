//! Calendar dates written in an answer or a block, as `(year, month, day)`.
//!
//! A date is recognised at the start of a `\w` run (digits are ASCII; "space"
//! is a run of one or more `str.isspace()` characters; a year is exactly four
//! digits not followed by a `\w` character):
//!
//! * ISO: `YYYY-M-D` (month and day of 1-2 digits, not followed by `\w`) or
//!   `YYYY-MM` (exactly 2 month digits, not followed by `\w` nor by `-` and a
//!   digit);
//! * `D Month[,] Y` and `Month D[,] Y`, the day of 1-2 digits, optionally
//!   with an ordinal suffix `st`/`nd`/`rd`/`th` (lower case), ending its run;
//! * `Month[,] Y`.
//!
//! A month is a whole `\w` run starting with an uppercase letter whose case
//! fold is a month name or abbreviation (`jan` ... `dec`, `sept`), optionally
//! followed by `.`. Months are 1-12 and days 1-31. A month-only date has day
//! 0; a block's full date also counts as its month-only date, so "February
//! 2026" in an answer is found in a block saying "1 February 2026".

use crate::chars::{fold, is_space, is_upper_word, is_word};
use crate::numbers::{is_digit, run_end, word_end};

/// `(year, month, day)`; day 0 for a month-only date.
pub type Date = (u32, u32, u32);

#[rustfmt::skip]
const MONTHS: [(&str, u32); 24] = [
    ("january", 1), ("february", 2), ("march", 3), ("april", 4), ("may", 5), ("june", 6),
    ("july", 7), ("august", 8), ("september", 9), ("october", 10), ("november", 11),
    ("december", 12), ("jan", 1), ("feb", 2), ("mar", 3), ("apr", 4), ("jun", 6), ("jul", 7),
    ("aug", 8), ("sep", 9), ("sept", 9), ("oct", 10), ("nov", 11), ("dec", 12),
];

const ORDINALS: [[char; 2]; 4] = [['s', 't'], ['n', 'd'], ['r', 'd'], ['t', 'h']];

fn value(t: &[char]) -> u32 {
    t.iter().fold(0, |v, &c| v * 10 + (c as u32 - '0' as u32))
}

fn ends_word(t: &[char], e: usize) -> bool {
    !t.get(e).is_some_and(|&c| is_word(c))
}

/// The month at `k`: index after it (and its optional `.`) and its number.
fn month_at(t: &[char], k: usize) -> Option<(usize, u32)> {
    if !t.get(k).is_some_and(|&c| is_upper_word(c)) {
        return None;
    }
    let r = word_end(t, k);
    let folded = fold(&t[k..r]);
    let month = MONTHS.iter().find(|(w, _)| *w == folded)?.1;
    Some((if t.get(r) == Some(&'.') { r + 1 } else { r }, month))
}

/// A day (1-2 digits, optional ordinal suffix, ending its run) at `k`.
fn day_at(t: &[char], k: usize) -> Option<(usize, u32)> {
    let e = run_end(t, k, is_digit);
    if !(1..=2).contains(&(e - k)) {
        return None;
    }
    let d = value(&t[k..e]);
    if !(1..=31).contains(&d) {
        return None;
    }
    if ends_word(t, e) {
        return Some((e, d));
    }
    let suffix = t.get(e..e + 2)?;
    (ORDINALS.iter().any(|o| o == suffix) && ends_word(t, e + 2)).then_some((e + 2, d))
}

/// A year (exactly four digits ending the run) at `k`.
fn year_at(t: &[char], k: usize) -> Option<(usize, u32)> {
    let e = run_end(t, k, is_digit);
    (e - k == 4 && ends_word(t, e)).then(|| (e, value(&t[k..e])))
}

/// Skip an optional `,` then at least one whitespace character.
fn separator(t: &[char], k: usize, comma: bool) -> Option<usize> {
    let k = if comma && t.get(k) == Some(&',') {
        k + 1
    } else {
        k
    };
    let e = run_end(t, k, is_space);
    (e > k).then_some(e)
}

fn iso(t: &[char], i: usize) -> Option<(usize, Date)> {
    let y = run_end(t, i, is_digit);
    if y - i != 4 || t.get(y) != Some(&'-') {
        return None;
    }
    let m_end = run_end(t, y + 1, is_digit);
    let m_len = m_end - (y + 1);
    if !(1..=2).contains(&m_len) {
        return None;
    }
    let (year, month) = (value(&t[i..y]), value(&t[y + 1..m_end]));
    if !(1..=12).contains(&month) {
        return None;
    }
    if t.get(m_end) == Some(&'-') && t.get(m_end + 1).is_some_and(|&c| is_digit(c)) {
        let d_end = run_end(t, m_end + 1, is_digit);
        if d_end - (m_end + 1) > 2 || !ends_word(t, d_end) {
            return None;
        }
        let day = value(&t[m_end + 1..d_end]);
        return (1..=31)
            .contains(&day)
            .then_some((d_end, (year, month, day)));
    }
    (m_len == 2 && ends_word(t, m_end)).then_some((m_end, (year, month, 0)))
}

/// The date starting at `t[i]` (the start of a `\w` run), if any.
pub fn date_at(t: &[char], i: usize) -> Option<(usize, Date)> {
    if is_digit(t[i]) {
        if let Some(found) = iso(t, i) {
            return Some(found);
        }
        let (e, day) = day_at(t, i)?;
        let (e, month) = month_at(t, separator(t, e, false)?)?;
        let (e, year) = year_at(t, separator(t, e, true)?)?;
        return Some((e, (year, month, day)));
    }
    let (m_end, month) = month_at(t, i)?;
    let with_day = separator(t, m_end, false)
        .and_then(|k| day_at(t, k))
        .and_then(|(e, day)| Some((separator(t, e, true)?, day)))
        .and_then(|(k, day)| year_at(t, k).map(|(e, year)| (e, (year, month, day))));
    with_day.or_else(|| {
        let (e, year) = year_at(t, separator(t, m_end, true)?)?;
        Some((e, (year, month, 0)))
    })
}

/// Every date of a block, full dates also as their month-only date.
pub fn block_dates(t: &[char], out: &mut std::collections::HashSet<Date>) {
    for i in 0..t.len() {
        if !is_word(t[i]) || (i > 0 && is_word(t[i - 1])) {
            continue;
        }
        if let Some((_, (y, m, d))) = date_at(t, i) {
            out.insert((y, m, d));
            out.insert((y, m, 0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> Option<(usize, Date)> {
        let t: Vec<char> = s.chars().collect();
        date_at(&t, 0)
    }

    #[test]
    fn formats() {
        assert_eq!(date("2026-02-01."), Some((10, (2026, 2, 1))));
        assert_eq!(date("2026-02 x"), Some((7, (2026, 2, 0))));
        assert_eq!(date("1 February 2026"), Some((15, (2026, 2, 1))));
        assert_eq!(date("1st February, 2026"), Some((18, (2026, 2, 1))));
        assert_eq!(date("February 1, 2026"), Some((16, (2026, 2, 1))));
        assert_eq!(date("Oct 31st 2024"), Some((13, (2024, 10, 31))));
        assert_eq!(date("Feb. 2026"), Some((9, (2026, 2, 0))));
        assert_eq!(date("May, 2026"), Some((9, (2026, 5, 0))));
        assert_eq!(date("February 2026"), Some((13, (2026, 2, 0))));
    }

    #[test]
    fn non_dates() {
        for s in [
            "2026-13-01",
            "2026-2",
            "2019-20",
            "2026-02-01T10",
            "2026-02-1x",
            "32 May 2026",
            "1 february 2026",
            "1 February 26",
            "May be 2026",
            "1 Feb",
            "February",
            "1 Febr 2026",
            "3 May 20261",
            "2020-2021",
            "12th",
            "1 May2026",
        ] {
            assert_eq!(date(s), None, "{s}");
        }
        // "May 32, 2026" has no valid day, but "May 32" is not "Month Y" either.
        assert_eq!(date("May 32, 2026"), None);
    }

    #[test]
    fn block_dates_add_month_only() {
        let mut out = std::collections::HashSet::new();
        let t: Vec<char> = "Signed on October 1, 2024 (2024-10-01).".chars().collect();
        block_dates(&t, &mut out);
        assert!(out.contains(&(2024, 10, 1)) && out.contains(&(2024, 10, 0)));
        assert_eq!(out.len(), 2);
    }
}

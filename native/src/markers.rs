//! Numeric citation markers (`[3]`, `[1, 2]`, `[4-6]`); per-sentence citations
//! are in [`crate::cited`].
//!
//! Grammar (every character literal; digits are ASCII):
//!
//! ```text
//! marker = "[" elem ( " "* "," " "* elem )* "]"
//! elem   = num | num ("-" | "–") num        inclusive range, en dash allowed
//! num    = [1-9] [0-9]{0,3}                 1..=9999, no leading zero
//! ```
//!
//! A range must be ascending and expand to at most [`MAX_RANGE_LEN`] numbers,
//! otherwise the whole bracket is not a citation (it stays plain text). Text
//! is scanned left to right; a successful marker is skipped whole, a failed
//! `[` is skipped alone (like `re.finditer`).

/// Largest number a range may expand to (`[1-50]` is fine, `[1-51]` is not).
pub const MAX_RANGE_LEN: u32 = 50;

/// Numbers are below 10,000, so a fixed bitset de-duplicates them.
const SEEN_WORDS: usize = 10_000 / 64 + 1;

/// `num` at `i`: its value and the index after it.
fn number(t: &[char], i: usize) -> Option<(u32, usize)> {
    let first = t.get(i).copied().filter(|c| ('1'..='9').contains(c))?;
    let mut value = first as u32 - '0' as u32;
    let mut j = i + 1;
    while j < t.len() && j - i < 4 && t[j].is_ascii_digit() {
        value = value * 10 + (t[j] as u32 - '0' as u32);
        j += 1;
    }
    Some((value, j))
}

/// Parse a marker starting at `t[p]`; on success push its numbers (ranges
/// expanded, in written order, duplicates kept) to `out` and return the index
/// just past `]`. On failure `out` is left unchanged.
pub fn parse_marker(t: &[char], p: usize, out: &mut Vec<u32>) -> Option<usize> {
    let mark = out.len();
    let end = parse_elems(t, p, out);
    if end.is_none() {
        out.truncate(mark);
    }
    end
}

fn parse_elems(t: &[char], p: usize, out: &mut Vec<u32>) -> Option<usize> {
    if t.get(p) != Some(&'[') {
        return None;
    }
    let mut i = p + 1;
    loop {
        let (a, j) = number(t, i)?;
        i = j;
        if matches!(t.get(i), Some('-' | '–')) {
            let (b, j) = number(t, i + 1)?;
            i = j;
            if b < a || b - a + 1 > MAX_RANGE_LEN {
                return None;
            }
            out.extend(a..=b);
        } else {
            out.push(a);
        }
        let mut j = i;
        while t.get(j) == Some(&' ') {
            j += 1;
        }
        if t.get(j) == Some(&',') {
            i = j + 1;
            while t.get(i) == Some(&' ') {
                i += 1;
            }
        } else if t.get(i) == Some(&']') {
            return Some(i + 1);
        } else {
            return None;
        }
    }
}

/// Call `f(start, end, numbers)` for each marker of `t`, left to right.
pub fn for_each_marker(t: &[char], mut f: impl FnMut(usize, usize, &[u32])) {
    let mut numbers = Vec::new();
    let mut p = 0;
    while p < t.len() {
        if t[p] == '[' {
            numbers.clear();
            if let Some(end) = parse_marker(t, p, &mut numbers) {
                f(p, end, &numbers);
                p = end;
                continue;
            }
        }
        p += 1;
    }
}

/// Cited numbers of one sentence `t` (first-appearance order, unique).
pub fn citations_in(t: &[char]) -> Vec<u32> {
    let mut seen = [0u64; SEEN_WORDS];
    let mut cited = Vec::new();
    for_each_marker(t, |_, _, numbers| {
        for &n in numbers {
            let (word, bit) = (n as usize / 64, 1u64 << (n % 64));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                cited.push(n);
            }
        }
    });
    cited
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(s: &str) -> Option<(usize, Vec<u32>)> {
        let t: Vec<char> = s.chars().collect();
        let mut out = vec![7];
        let end = parse_marker(&t, 0, &mut out);
        if end.is_none() {
            assert_eq!(out, [7], "failure leaves the buffer untouched");
        }
        end.map(|e| (e, out[1..].to_vec()))
    }

    #[test]
    fn marker_grammar() {
        assert_eq!(marker("[1]"), Some((3, vec![1])));
        assert_eq!(marker("[12, 3,4 , 5]x"), Some((13, vec![12, 3, 4, 5])));
        assert_eq!(marker("[2-4]"), Some((5, vec![2, 3, 4])));
        assert_eq!(marker("[2–2, 9]"), Some((8, vec![2, 9])));
        assert_eq!(marker("[9999]"), Some((6, vec![9999])));
        assert_eq!(marker("[1-50]").map(|m| m.1.len()), Some(50));
        for bad in [
            "[0]", "[01]", "[10000]", "[1-51]", "[3-2]", "[ 1]", "[1 ]", "[1,]", "[1-]", "[a]",
            "[1", "[]", "[1- 2]", "[1-2-3]", "[^1]", "(1)", "[-1]", "[1.5]",
        ] {
            assert_eq!(marker(bad), None, "{bad}");
        }
    }

    #[test]
    fn scanning_skips_failed_brackets_only() {
        let t: Vec<char> = "[[1]] [x] [2-3][1-99][4]".chars().collect();
        let mut found = vec![];
        for_each_marker(&t, |s, e, n| found.push((s, e, n.to_vec())));
        assert_eq!(
            found,
            [(1, 4, vec![1]), (10, 15, vec![2, 3]), (21, 24, vec![4])]
        );
    }

    #[test]
    fn citations_are_unique_in_first_appearance_order() {
        let t: Vec<char> = "A [3] b [1-3] c [2, 3, 5].".chars().collect();
        assert_eq!(citations_in(&t), [3, 1, 2, 5]);
    }
}

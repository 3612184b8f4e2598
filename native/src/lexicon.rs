//! Word helpers shared with `common/lexicon.py`, the one lexicon of the
//! Python side: the light stemmer that chunking, generation and the agent
//! match words by, so the native sentence scorer ([`crate::evidence`])
//! matches them the same way.
//!
//! [`crate::polarity`] has its own, different stemmer (documented there);
//! this one is `common.lexicon.stem`, character for character.

/// `common.lexicon.SUFFIXES`, tried in this order; the first that fits wins.
pub const SUFFIXES: [&str; 11] = [
    "ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s", "e",
];

/// A suffix is stripped only if at least this many characters remain.
pub const MIN_STEM_CHARS: usize = 3;

/// `common.lexicon.stem` of an already case-folded word (see
/// [`crate::chars::fold_into`]; on folded text Python's `lower()` changes
/// nothing): the word without the first of [`SUFFIXES`] it ends with that
/// leaves at least [`MIN_STEM_CHARS`] characters (chars, not bytes, as
/// Python's `len`), else the word itself. "backflushing" -> "backflush",
/// "weekly" -> "week", "validations" -> "valid".
pub fn stem(word: &str) -> &str {
    let chars = word.chars().count();
    for suffix in SUFFIXES {
        // Suffixes are ASCII: their byte and char lengths agree, and a UTF-8
        // string ending with their bytes ends with their chars.
        if chars >= suffix.len() + MIN_STEM_CHARS && word.ends_with(suffix) {
            return &word[..word.len() - suffix.len()];
        }
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stem_equals_the_python_lexicon_s() {
        // (word, common.lexicon.stem(word)), computed in Python.
        let cases = [
            ("backflushing", "backflush"),
            ("backflush", "backflush"),
            ("weekly", "week"),
            ("week", "week"),
            ("validations", "valid"),
            ("nations", "nation"),
            ("ations", "ation"),
            ("station", "station"),
            ("stations", "station"),
            ("running", "runn"),
            ("rings", "ring"),
            ("studies", "stud"),
            ("ties", "tie"),
            ("tied", "tied"),
            ("copied", "cop"),
            ("assumed", "assum"),
            ("assume", "assum"),
            ("axes", "axe"),
            ("ox", "ox"),
            ("dosage", "dosag"),
            ("adults", "adult"),
            ("cares", "car"),
            ("caress", "cares"),
            ("eed", "eed"),
            ("ééed", "ééed"),
            ("éééed", "ééé"),
            ("ïes", "ïes"),
            ("naïve", "naïv"),
            ("straße", "straß"),
            ("σοφιες", "σοφιες"),
            ("i\u{307}ed", "i\u{307}ed"),
            ("i\u{307}i\u{307}ed", "i\u{307}i\u{307}"),
            ("co2s", "co2"),
            ("x_ys", "x_y"),
            ("ly", "ly"),
            ("only", "only"),
            ("e", "e"),
            ("", ""),
            ("see", "see"),
            ("tree", "tre"),
            ("ings", "ing"),
            ("things", "thing"),
        ];
        for (word, want) in cases {
            assert_eq!(stem(word), want, "{word:?}");
        }
    }
}

"""What quoting by meaning takes out of a question and its sentences before the embedder compares them.

The comparison itself runs with the real packaged model in tests/integration/test_quote_by_meaning.py.
"""

from __future__ import annotations

from rag_system.generation.meaning import without_names


def test_names_are_blanked_as_whole_words_in_any_case():
    assert without_names("StartupXYZ LLC hired startupxyz staff", ["StartupXYZ"]) == "LLC hired staff"
    assert without_names("StartupXYZs and xStartupXYZ", ["StartupXYZ"]) == "StartupXYZs and xStartupXYZ"


def test_longer_names_go_first_so_a_shorter_one_cannot_split_them():
    assert without_names("RFC 9000 and RFC 90001", ["RFC", "RFC 9000"]) == "and 90001"


def test_a_question_without_names_leaves_the_text_as_written():
    assert without_names("  Atlas-7   specs ", []) == "Atlas-7 specs"

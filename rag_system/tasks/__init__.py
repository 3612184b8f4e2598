"""Whole-document tasks beyond one question: cited summaries and comparisons.

Both are built from the named documents' own chunks in document order (not
from retrieval), so nothing outside those documents can creep in, and both
carry the same citation guarantees as a question's answer: every part is
checked with `rag_system.grounding.citations.check`, and a part the model
could not back is replaced by verbatim, cited sentences.
"""

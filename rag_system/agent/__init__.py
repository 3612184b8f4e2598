"""Docent agent layer: small, pure steps around retrieval.

triage (answer smalltalk directly), decompose (split compound questions),
memory (make follow-ups standalone), cache (session-scoped semantic cache),
reformulate (one retry when evidence is weak), tokens (per-stage accounting).
Every step works without an LLM; an optional `TextGenerator` only refines,
and its output is validated and discarded when unusable.
"""

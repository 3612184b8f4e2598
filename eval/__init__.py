"""Evaluation and benchmark tooling for Docent (run as ``python -m eval.<tool>``)."""

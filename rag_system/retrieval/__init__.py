"""Docent retrieval."""

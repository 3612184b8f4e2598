"""Docent chunking."""

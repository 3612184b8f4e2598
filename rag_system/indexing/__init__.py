"""Docent indexing."""

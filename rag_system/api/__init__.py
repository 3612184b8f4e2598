"""Docent api."""

"""Docent generation."""

"""Docent agent."""

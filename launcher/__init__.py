"""Docent launcher: start, watch, restart and stop the three services (`run_system.py`).

Importing the package does nothing; `launcher.cli.main` is the entry point.
"""

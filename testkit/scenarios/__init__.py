"""Reliability scenarios (bad input, hostile files, security, load, faults) that tests/reliability
asserts on and `python -m eval.stress` reports."""

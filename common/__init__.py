"""The ground floor the gateway (`backend/`) and the engine (`rag_system/`) both build on.

HTTP vocabulary, strict JSON bodies, JSON logging, loopback checks, SSE framing and the lexicon.
It imports neither service (tests/unit/test_boundaries.py checks), so both can share it without
either importing the other.
"""

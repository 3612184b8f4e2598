"""Docent RAG engine: ingestion, indexing, retrieval and answering.

Importing this package does no work: models, tables and servers are created
only when a caller asks for them.
"""

__version__ = "0.1.0"

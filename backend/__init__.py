"""Docent gateway (:8000): sessions, indexes, uploads and chat history in SQLite.

The gateway is the only writer of the SQLite database and of the upload
directory; it talks to the RAG API (:8001) over HTTP for everything that needs
models or LanceDB. Nothing happens at import time.
"""

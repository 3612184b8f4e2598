"""A question's forward pass on ONNX Runtime: the embedder's own weights, the same vectors, about half the time.

Why: embedding the question was the largest single leg of the first stage
at 100,000 chunks (11.1 ms p50 of 30.0 on 2 quiet cores), and most of it is
PyTorch's eager dispatch of ~100 small operators for a 16-token pass, not
arithmetic. ONNX Runtime runs the same graph with fused kernels: 6.0 against
10.2-11.2 ms p50 for the 91 gold questions side by side, every vector within
cosine 0.9999999 of PyTorch's (Documentation/evaluation.md, "A million
chunks"). int8 was rejected for its vectors (cosine 0.90);
this is fp32 throughout, so indexes built with the PyTorch forward match.

The graph is exported from the loaded model (torch.onnx's TorchScript
exporter) the first time a question is embedded, never at import or load,
into a cache file named by the model's files and the library versions; a
process that cannot write the cache exports into memory. The embedder checks
the session's vectors against its PyTorch forward before using it
(`QUERY_MIN_COSINE`) and keeps PyTorch when they differ or anything fails.

Two choices keep the process small (the RAG API's budget is 2.5 GB under
load): the word-embedding table (47 MB of MiniLM's 90) stays out of the graph,
its rows gathered from the PyTorch model's own table, which this module only
reads; and ONNX Runtime's arena is off, because it keeps its largest pass's
buffers for good (one 4 x 512-token pass left 290 MB; without the arena 0).
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rag_system.embedding.bge import onnx_session

log = logging.getLogger(__name__)

#: The embedder uses the session only if every probe's vector is at least this close to PyTorch's.
QUERY_MIN_COSINE = 0.9999
#: Bumped when the exported graph changes shape, so old cache files are not reused.
EXPORT_FORMAT = 1
OPSET = 17
#: Texts of several lengths, padded together in one pass, that the session must embed as PyTorch does.
PROBES = ("What is the termination notice period?",
          "RFC 9220 bootstraps WebSockets over HTTP/3 with Extended CONNECT. Where was the pseudo-header "
          "it depends on first defined?",
          "x",
          "with")


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/docent/onnx` (or `~/.cache/...`): exports are shared by every data dir."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "docent" / "onnx"


def cache_key(model_dir: Path) -> str:
    """What the exported graph depends on: the model's files (name, size, mtime) and the two libraries."""
    import onnxruntime
    import torch

    digest = hashlib.sha256(f"{EXPORT_FORMAT}|{OPSET}|{torch.__version__}|{onnxruntime.__version__}".encode())
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"|{path.relative_to(model_dir)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:20]


def pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the real tokens, L2-normalised: the sentence-transformers pooling the PyTorch forward does."""
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return (pooled / norms).astype(np.float32, copy=False)


class OnnxQueryEncoder:
    """An ONNX Runtime session over the encoder, fed the model's token embeddings gathered in NumPy."""

    def __init__(self, session: Any, table: np.ndarray, inputs: tuple[str, ...]) -> None:
        self._session = session
        self._table = table  # a view of the PyTorch model's word embeddings: shared, never copied
        self._inputs = inputs  # the tokenizer outputs the graph takes besides the embeddings

    @classmethod
    def load(cls, model: Any, tokenizer: Any, model_dir: Path, cache_dir: Path | None) -> OnnxQueryEncoder:
        """The cached export of `model` (exported now if there is none), in a one-thread session."""
        inputs = _extra_inputs(model, tokenizer)
        source: str | bytes
        try:
            source = str(_cached_export(model, inputs, model_dir, cache_dir or default_cache_dir()))
        except OSError as exc:  # a read-only home or cache: export into memory, each process once
            log.info("ONNX export cache not writable (%s); exporting in memory", exc)
            buffer = io.BytesIO()
            _export(model, inputs, buffer)
            source = buffer.getvalue()
        table = model.get_input_embeddings().weight.detach().numpy()
        return cls(onnx_session(source, 1), table, inputs)  # one intra-op thread that sleeps when idle, no arena

    def hidden(self, enc: Mapping[str, np.ndarray]) -> np.ndarray:
        """The last hidden state (batch, tokens, dim) for a tokenizer's NumPy output."""
        feed = {"inputs_embeds": self._table[enc["input_ids"]]}
        feed.update({name: np.asarray(enc[name], dtype=np.int64) for name in self._inputs})
        return self._session.run(None, feed)[0]

    def embed(self, enc: Mapping[str, np.ndarray]) -> np.ndarray:
        """Unit vectors for a tokenizer's NumPy output (with `attention_mask`)."""
        return pool(self.hidden(enc), np.asarray(enc["attention_mask"]))


def _extra_inputs(model: Any, tokenizer: Any) -> tuple[str, ...]:
    """The tokenizer outputs besides `input_ids` that the model's forward takes (BERT: mask, token types)."""
    import inspect

    accepted = set(inspect.signature(model.forward).parameters)
    produced = tokenizer(["a", "b c"], padding=True).keys()
    return tuple(name for name in produced if name != "input_ids" and name in accepted)


def _cached_export(model: Any, inputs: tuple[str, ...], model_dir: Path, cache_dir: Path) -> Path:
    """The export's file in `cache_dir`, written first (atomically: processes may race) when missing."""
    target = cache_dir / f"{model_dir.name}-{cache_key(model_dir)}.onnx"
    if target.is_file():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".export-", suffix=".onnx")
    try:
        with os.fdopen(fd, "wb") as out:
            _export(model, inputs, out)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide it from the other users of a shared cache
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    log.info("exported the query encoder to %s", target)
    return target


def _export(model: Any, inputs: tuple[str, ...], out: Any) -> None:
    """Trace `model` from token embeddings to its last hidden state, every axis but the width dynamic."""
    import torch

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, inputs_embeds: Any, *rest: Any) -> Any:
            return self.model(inputs_embeds=inputs_embeds, **dict(zip(inputs, rest))).last_hidden_state

    width = int(model.get_input_embeddings().weight.shape[1])
    # A padded second row: traced on a mask of ones, a model may take a branch that skips masking.
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    extra = {"attention_mask": mask, "token_type_ids": torch.zeros_like(mask)}
    sample = (torch.zeros(2, 5, width), *(extra.get(name, mask) for name in inputs))
    names = ["inputs_embeds", *inputs]
    axes = {name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the exporter's deprecation and tracer notes: the probes check the result
        torch.onnx.export(Encoder().eval(), sample, out, input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes=axes, opset_version=OPSET, dynamo=False)

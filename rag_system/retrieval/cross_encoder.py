"""The ms-marco-MiniLM-L-12-v2 cross-encoder on ONNX Runtime: question and passage read together.

Why a cross-encoder after the first stage: the first stage compares a
question's vector with a window's, and BM25 counts shared words; a
cross-encoder reads both texts at once and is the usual second stage of a
retrieval system (MS MARCO). Its int8 file comes from a registry package
(rag_system/embedding/model_files.py); it runs here on ONNX Runtime directly,
without PyTorch.

What the file needs and what it costs:
- Token types matter: the pair is encoded as [CLS] question [SEP] passage
  [SEP] with the passage's tokens of type 1. Zeroed types score a relevant
  pair far lower (tests/integration/test_cross_encoder.py).
- No padding: the file's tokenizer pads every pair to 512 tokens, and a
  pass costs about 13 ms at 64 tokens, 33 ms at 160 and 200 ms at 512 on one
  core. Pairs run one by one at their own length.
- So it reads windows, not whole chunks: each chunk's lines are packed into
  windows of `WINDOW_TOKENS`, each under the chunk's context line, at most
  `MAX_WINDOWS` per chunk, and a chunk scores as its best window; and only
  the first stage's top `depth` chunks are read (RERANK_DEPTH).
- Its logits are squashed by a sigmoid onto 0..1, the scale `min_score`
  thresholds. The int8 file's scores are compressed against the published
  fp32 model's, so the default threshold was chosen on this file
  (Documentation/evaluation.md, "Embedders and the cross-encoder").
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rag_system.embedding.model_files import RERANKER_INT8, ModelFilesMissingError, model_folder, models_root
from rag_system.embedding.bge import onnx_session, single
from rag_system.retrieval.context_line import candidate_body
from rag_system.retrieval.reranker_types import KIND_CROSS_ENCODER, RerankerLoadError
from rag_system.retrieval.types import Candidate


PACKAGED_NAME = "ms-marco-minilm"
MODEL_ID = "cross-encoder/ms-marco-MiniLM-L-12-v2 (onnx int8)"
WINDOW_TOKENS = 128
MAX_WINDOWS = 4
MAX_PAIR_TOKENS = 512


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def is_onnx_folder(spec: str) -> bool:
    """A RERANKER_MODEL value naming a folder with an ONNX cross-encoder (model.onnx + tokenizer.json)."""
    folder = Path(spec).expanduser()
    return (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file()


class OnnxCrossEncoder:
    """One-logit cross-encoder: `score(query, texts)` gives each text its best window's sigmoid score."""

    kind = KIND_CROSS_ENCODER

    def __init__(self, folder: Path, model_id: str = MODEL_ID, threads: int = 0) -> None:
        from tokenizers import Tokenizer

        self.name = f"{KIND_CROSS_ENCODER}:{model_id}"
        self.model = model_id
        try:
            self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            self._tokenizer.no_padding()  # the file pads every pair to 512 tokens: 4-15x the work
            self._tokenizer.no_truncation()
            self._pairs = Tokenizer.from_file(str(folder / "tokenizer.json"))
            self._pairs.no_padding()
            self._pairs.enable_truncation(MAX_PAIR_TOKENS, strategy="only_second")
            self._session = onnx_session(folder / "model.onnx", 1)
        except Exception as exc:  # the tokenizer's and the runtime's own exception types
            raise RerankerLoadError(f"cannot load the cross-encoder from {folder}: {exc}") from exc
        self._inputs = tuple(i.name for i in self._session.get_inputs())
        # Pairs are independent: one pass per core at a time, each on one intra-op thread.
        self._workers = ThreadPoolExecutor(max_workers=threads if threads > 0 else (os.cpu_count() or 1),
                                           thread_name_prefix="docent-rerank")

    def windows(self, text: str, context: str = "") -> list[str]:
        """`text`'s lines packed into windows of at most WINDOW_TOKENS (a longer line cut by tokens),
        each opening with `context`; at most MAX_WINDOWS."""
        lines = [line for line in text.split("\n") if line.strip()]
        if not lines:
            return [context or text]
        sizes = [len(e.ids) for e in self._tokenizer.encode_batch(lines, add_special_tokens=False)]
        pieces: list[str] = []
        current: list[str] = []
        used = 0
        for line, size in zip(lines, sizes):
            if size > WINDOW_TOKENS:
                if current:
                    pieces.append("\n".join(current))
                    current, used = [], 0
                pieces.extend(self._cut(line))
                continue
            if current and used + size > WINDOW_TOKENS:
                pieces.append("\n".join(current))
                current, used = [], 0
            current.append(line)
            used += size
        if current:
            pieces.append("\n".join(current))
        head = f"{context}\n" if context else ""
        return [head + piece for piece in pieces[:MAX_WINDOWS]]

    def _cut(self, line: str) -> list[str]:
        offsets = self._tokenizer.encode(line, add_special_tokens=False).offsets
        return [line[offsets[i][0]:offsets[min(i + WINDOW_TOKENS, len(offsets)) - 1][1]]
                for i in range(0, len(offsets), WINDOW_TOKENS)]

    def logit(self, query: str, passage: str) -> float:
        """The model's raw relevance logit for one (question, passage) pair, unpadded."""
        return float(self._session.run(None, single(self._pairs.encode(query, passage), self._inputs))[0][0][0])

    def score_windows(self, query: str, windows: Sequence[Sequence[str]]) -> list[float]:
        """Each text's best window's sigmoid score; `windows[i]` are text i's windows."""
        flat = [(i, w) for i, group in enumerate(windows) for w in group]
        logits = list(self._workers.map(lambda item: self.logit(query, item[1]), flat))
        best = [-math.inf] * len(windows)
        for (i, _), value in zip(flat, logits):
            best[i] = max(best[i], value)
        return [sigmoid(b) if b > -math.inf else 0.0 for b in best]

    def score(self, query: str, texts: list[str], contexts: Sequence[str] | None = None) -> list[float]:
        """The `Reranker` protocol: texts are chunks, read as their windows (`contexts[i]`: text i's
        context line, taken out of its body and put over every window)."""
        heads = list(contexts) if contexts is not None else [""] * len(texts)
        return self.score_windows(query, [self.windows(t, h) for t, h in zip(texts, heads)])


def packaged_cross_encoder(models_dir: str = "") -> OnnxCrossEncoder:
    """The cross-encoder from the model files (`make setup`), or RerankerLoadError saying how to get it."""
    try:
        folder = model_folder(RERANKER_INT8, models_root(models_dir))
    except ModelFilesMissingError as exc:
        raise RerankerLoadError(str(exc)) from exc
    return OnnxCrossEncoder(folder)


def load_onnx_cross_encoder(spec: str, models_dir: str = "") -> Any:
    """`RERANKER_MODEL` as an ONNX cross-encoder: the packaged name, or a folder with model.onnx + tokenizer.json."""
    if spec == PACKAGED_NAME:
        return packaged_cross_encoder(models_dir)
    folder = Path(spec).expanduser()
    return OnnxCrossEncoder(folder, model_id=folder.name)


def rerank_scores(reranker: Any, query: str, candidates: Sequence[Candidate], depth: int) -> list[float]:
    """One score per candidate: the reranker's for the first `depth` (0 = all), NaN for the rest (they
    keep their first-stage order after every scored one). The ONNX cross-encoder reads each chunk's
    body with its context line put over every window; other rerankers read the chunk text."""
    top = list(candidates[:depth] if depth > 0 else candidates)
    if isinstance(reranker, OnnxCrossEncoder):
        bodies = [candidate_body(c) for c in top]
        heads = [c.text.split("\n", 1)[0] if body != c.text else "" for c, body in zip(top, bodies)]
        scores = reranker.score(query, bodies, heads)
    else:
        scores = reranker.score(query, [c.text for c in top])
    return list(scores) + [math.nan] * (len(candidates) - len(top))

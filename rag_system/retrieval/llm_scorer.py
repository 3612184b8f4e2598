"""An LLM as relevance judge: P("yes") for "Is the passage relevant to the query?".

Why: a GGUF chat/base model is often the only model an offline install has
besides the embedder, and any causal LM can judge relevance pointwise. We do
not generate: one forward pass per passage, then the probability mass of the
"yes" tokens against the "no" tokens at the next position (a deterministic,
temperature-0 reading of the logits), so the score is a 0..1 number that
`min_score` can threshold. Small models are poorly calibrated: the ranking
is more trustworthy than the absolute value.

Why a process-wide cache: a llama.cpp model costs memory and seconds to load;
every request must share one instance per file, guarded by a lock because a
llama.cpp context is not thread-safe. Nothing is loaded at import.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_system.retrieval.reranker_types import KIND_LLM, RerankerLoadError

log = logging.getLogger(__name__)

#: Passage first and the question last, right before the answer slot, after
#: worked examples: the layout that did best of those we tried. Even so, the
#: packaged Gemma 3 270M *base* model ranks at chance level; real reranking
#: needs an instruction-tuned GGUF (see tests/integration/test_rerank.py).
PASSAGE_PREFIX = "Passage: "
QUESTION = "\nQuery: {query}\nIs the passage relevant to the query? Answer yes or no.\nAnswer:"
#: Worked examples in the same format, so a base (non-chat) model knows the task
#: and answers with one of the two words; balanced so neither answer is primed.
FEW_SHOT = (
    ("What is the capital of Japan?", "Tokyo is the capital and the most populous city of Japan.", "yes"),
    ("What is the capital of Japan?", "Bananas are an excellent source of potassium and fibre.", "no"),
    ("How long is the warranty on the X200 printer?", "The Andes are the longest mountain range in the world.",
     "no"),
    ("How long is the warranty on the X200 printer?", "Every X200 printer comes with a two-year limited "
     "warranty covering parts and labour.", "yes"),
)
YES_VARIANTS = ("yes", "Yes", "YES", " yes", " Yes", " YES")
NO_VARIANTS = ("no", "No", "NO", " no", " No", " NO")
MIN_CTX = 512
CTX_STEP = 256


@dataclass
class _Loaded:
    """One loaded model, its context size and the lock that serialises its use."""

    llm: Any
    n_ctx: int
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class _Vocab:
    tokenizer: Any  # a vocab-only Llama: tokenizes without weights or a real context
    n_ctx_train: int
    yes_ids: list[int]
    no_ids: list[int]


class _ModelCache:
    """Per-process models keyed by file; grows the context when a prompt needs it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._vocab: dict[str, _Vocab] = {}
        self._models: dict[str, _Loaded] = {}
        self._atexit = False

    def _close_at_exit(self) -> None:
        # llama-cpp-python frees models in __del__, which fails noisily when it
        # runs during interpreter teardown; closing them first avoids that.
        if not self._atexit:
            atexit.register(self._shutdown)
            self._atexit = True

    def _shutdown(self) -> None:
        with self._lock:
            for item in [*(v.tokenizer for v in self._vocab.values()), *(m.llm for m in self._models.values())]:
                item.close()  # idempotent; a later __del__ finds nothing left to free
            self._vocab.clear()
            self._models.clear()

    def vocab(self, path: str) -> _Vocab:
        with self._lock:
            hit = self._vocab.get(path)
            if hit is None:
                self._close_at_exit()
                hit = _load_vocab(path)
                self._vocab[path] = hit
            return hit

    def model(self, path: str, n_ctx: int, n_threads: int, n_gpu_layers: int) -> _Loaded:
        with self._lock:
            hit = self._models.get(path)
            if hit is None or hit.n_ctx < n_ctx:
                # A smaller instance still in use elsewhere keeps its own reference
                # and is freed by the garbage collector when that call finishes.
                hit = _Loaded(_load_llama(path, n_ctx=n_ctx, n_threads=n_threads, n_gpu_layers=n_gpu_layers),
                              n_ctx)
                self._models[path] = hit
            return hit

    def clear(self) -> None:
        """Forget every model; instances still in use elsewhere are freed when that use ends."""
        with self._lock:
            self._vocab.clear()
            self._models.clear()


_MODELS = _ModelCache()


def forget_llm_models() -> None:
    """Drop cached llama.cpp models (tests, or after the file changed)."""
    _MODELS.clear()


def _llama_class() -> Any:
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise RerankerLoadError("llama-cpp-python is not installed; it is needed for a .gguf reranker") from exc
    return Llama


def _load_llama(path: str, **params: Any) -> Any:
    Llama = _llama_class()
    log.info("loading llama.cpp model %s (%s)", path, params)
    try:
        return Llama(model_path=path, verbose=False, logits_all=False, **params)
    except (ValueError, RuntimeError, OSError) as exc:  # llama-cpp-python raises ValueError on bad files
        raise RerankerLoadError(f"cannot load GGUF model {path!r}: {exc}") from exc


def _load_vocab(path: str) -> _Vocab:
    if not Path(path).is_file():
        raise RerankerLoadError(f"GGUF model file {path!r} does not exist")
    tokenizer = _load_llama(path, vocab_only=True, n_ctx=MIN_CTX)
    yes_ids = _single_token_ids(tokenizer, YES_VARIANTS)
    no_ids = _single_token_ids(tokenizer, NO_VARIANTS)
    if not yes_ids or not no_ids:
        raise RerankerLoadError(f"{path!r}: 'yes'/'no' are not single tokens in this vocabulary")
    return _Vocab(tokenizer, _context_length(tokenizer.metadata), yes_ids, no_ids)


def _context_length(metadata: dict[str, str]) -> int:
    """The training context from GGUF metadata (a vocab-only load reports 0 itself)."""
    arch = metadata.get("general.architecture", "")
    try:
        return int(metadata.get(f"{arch}.context_length", "0")) or MIN_CTX
    except ValueError:
        return MIN_CTX


def _single_token_ids(tokenizer: Any, variants: tuple[str, ...]) -> list[int]:
    """Ids of the variants that are one token; multi-token spellings cannot be read off one step."""
    ids: list[int] = []
    for word in variants:
        tokens = tokenizer.tokenize(word.encode(), add_bos=False, special=False)
        if len(tokens) == 1 and tokens[0] not in ids:
            ids.append(tokens[0])
    return ids


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def yes_probability(logits: Any, yes_ids: list[int], no_ids: list[int]) -> float:
    """P(yes | yes or no) at one position: sigmoid(logsumexp(yes) - logsumexp(no))."""
    diff = _logsumexp([float(logits[i]) for i in yes_ids]) - _logsumexp([float(logits[i]) for i in no_ids])
    return 1.0 / (1.0 + math.exp(-diff)) if diff >= -700 else 0.0


class LlmYesNoReranker:
    """Pointwise LLM judge over a GGUF file; implements `reranker_types.Reranker`."""

    kind = KIND_LLM

    def __init__(self, model_path: str, *, max_passage_tokens: int = 1024, max_query_tokens: int = 256,
                 n_threads: int | None = None, n_gpu_layers: int = 0) -> None:
        self.model_path = str(Path(model_path).expanduser())
        self.name = f"{KIND_LLM}:{Path(self.model_path).name}"
        self.max_passage_tokens = max_passage_tokens
        self.max_query_tokens = max_query_tokens
        self.n_threads = n_threads or os.cpu_count() or 1
        self.n_gpu_layers = n_gpu_layers
        self._vocab = _MODELS.vocab(self.model_path)  # fails fast (RerankerLoadError) on a bad file
        # Load the weights now, with a context sized for the longest prompt the
        # truncation limits allow, so a broken model shows in the status at
        # startup and requests never pay for a load or a context resize.
        head, rest = self.prompt_parts("", "")
        self._context_for(len(head) + len(rest) + max_passage_tokens + max_query_tokens)

    @property
    def answer_ids(self) -> tuple[list[int], list[int]]:
        """Token ids read as "yes" and as "no" at the answer slot."""
        return list(self._vocab.yes_ids), list(self._vocab.no_ids)

    def detokenize(self, tokens: list[int]) -> str:
        return self._vocab.tokenizer.detokenize(tokens).decode("utf-8", errors="replace")

    def prompt_parts(self, query: str, passage: str) -> tuple[list[int], list[int]]:
        """(shared prefix, passage-specific rest) as tokens; passage and query truncated exactly.

        The prefix (BOS and the worked examples) is the same for every
        passage and query, so its KV cache is computed once per model.
        """
        tok = self._vocab.tokenizer
        q_tokens = tok.tokenize(query.encode(), add_bos=False, special=False)[:self.max_query_tokens]
        query = tok.detokenize(q_tokens).decode("utf-8", errors="ignore")
        shots = "".join(f"{PASSAGE_PREFIX}{p}{QUESTION.format(query=q)} {a}\n\n" for q, p, a in FEW_SHOT)
        head = tok.tokenize((shots + PASSAGE_PREFIX).encode(), add_bos=True, special=False)
        body = tok.tokenize(passage.encode(), add_bos=False, special=False)[:self.max_passage_tokens]
        tail = tok.tokenize(QUESTION.format(query=query).encode(), add_bos=False, special=False)
        return head, [*body, *tail]

    def prompt_tokens(self, query: str, passage: str) -> list[int]:
        head, rest = self.prompt_parts(query, passage)
        return [*head, *rest]

    def score(self, query: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        parts = [self.prompt_parts(query, text) for text in texts]
        head = parts[0][0]
        loaded = self._context_for(len(head) + max(len(rest) for _, rest in parts))
        with loaded.lock:
            return [self._score_one(loaded.llm, head, rest) for _, rest in parts]

    def _context_for(self, prompt_tokens: int) -> _Loaded:
        """The shared model with a context of at least `prompt_tokens` + 1, rounded up."""
        needed = prompt_tokens + 1
        n_ctx = max(MIN_CTX, -(-needed // CTX_STEP) * CTX_STEP)
        n_ctx = min(n_ctx, max(self._vocab.n_ctx_train, needed))
        return _MODELS.model(self.model_path, n_ctx, self.n_threads, self.n_gpu_layers)

    def _score_one(self, llm: Any, head: list[int], rest: list[int]) -> float:
        import llama_cpp
        import numpy as np

        # The prefix is the same for every call, so its KV cache is kept across
        # passages and requests; only the previous passage is cut away. Models
        # whose memory cannot be cut at a position (recurrent ones) re-read it.
        # The prefix is always evaluated on its own, so reuse is bit-identical.
        cached = llm.n_tokens >= len(head) and llm.input_ids[:len(head)].tolist() == head
        memory = llama_cpp.llama_get_memory(llm.ctx)
        if cached and llama_cpp.llama_memory_seq_rm(memory, 0, len(head), -1):
            llm.n_tokens = len(head)
        else:
            llm.reset()
            llm.eval(head)
        llm.eval(rest)
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(llm.n_vocab(),))
        return yes_probability(logits, self._vocab.yes_ids, self._vocab.no_ids)

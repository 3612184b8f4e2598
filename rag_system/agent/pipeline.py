"""The query pipeline as one readable sequence of typed stages (Documentation/answering.md).

    query ─► triage ─► follow-up ─► cache ─► decompose? ─► first stage (retry once if weak)
          ─► rerank/select ─► expand ─► budget ─► synthesize ─► validate ─► repair ─► answer | refuse

Each stage is a function that returns a new value; `Stages` (agent/stages.py)
times it and reports it through `emit(event, data)`: the same events the RAG
API streams as SSE, so the CLI, `/chat` and `/chat/stream` share one code
path. The pipeline holds only shared components (engine, backends, the
semantic cache, which is thread-safe) and no conversation: each call gets its
own frozen `ChatRequest` carrying the turns so far, so concurrent requests never
see each other's options and a follow-up resolves the same on any replica.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from rag_system.agent.cache import CacheScope, SemanticCache
from rag_system.agent.decompose import decompose
from rag_system.agent.direct import answer_directly
from rag_system.agent.evidence import expand, gather
from rag_system.agent.followup import standalone_query
from rag_system.agent.stages import Stages
from rag_system.agent.tokens import TokenLedger
from rag_system.agent.triage import RouteDecision, route_message
from rag_system.agent.types import TextGenerator, Turn
from rag_system.config import Settings
from rag_system.generation.llm import GenerationParams, LLMBackend, Message
from rag_system.generation.meaning import Meaning
from rag_system.generation.registry import BackendRegistry
from rag_system.generation.events import Emit, checked
from rag_system.generation.synthesis import Answer, SynthesisOptions, Synthesizer
from rag_system.retrieval.engine import RetrievalEngine
from rag_system.generation.pruning import excerpts
from rag_system.grounding.terms import (compound_set, compound_words, initialisms, mentions_compound, specific_words,
                                         spelled_elsewhere, term_set)
from rag_system.retrieval.context_line import candidate_body
from rag_system.retrieval.vocabulary import unmentioned
from rag_system.retrieval.evidence import PackedContext
from rag_system.retrieval.packer import pack, widen
from rag_system.retrieval.types import RetrievalOptions
from rag_system.tasks.documents import catalogue, resolve
from rag_system.retrieval.inspector import answer_trace
from rag_system.tasks.routing import nameless_summary, scope_phrase
from rag_system.tasks.runner import TaskResponse, TaskRunner


PROMPT_OVERHEAD_TOKENS = 400  # system rules, example, question, chat template
#: Whole blocks an extractive answer chooses its sentences from (no prompt to pay for).
EXTRACTIVE_EVIDENCE_TOKENS = 1500
_RETRIEVAL_KEYS = {"mode", "k", "filters", "fusion", "rerank", "min_score", "min_keep", "top_k"}


@dataclass(frozen=True)
class ChatRequest:
    query: str
    indexes: tuple[str, ...]
    retrieval: RetrievalOptions
    session_id: str | None = None
    backend: str | None = None
    model: str | None = None
    context_expand: bool = False
    context_window_size: int = 1
    query_decompose: bool = True
    verify: bool = True
    force_rag: bool = False
    answer_top_k: int = 8
    max_tokens: int = 384
    evidence_tokens: int = 1500
    prune: bool = True  # prompt shows each block's sentences that bear on the question
    task: str = "qa"  # qa | summary | compare | auto (rag_system/tasks)
    documents: tuple[str, ...] = ()  # document names or ids a task is about
    history: tuple[Turn, ...] = ()  # the conversation before this question, oldest first
    warnings: tuple[str, ...] = ()  # said with the answer (e.g. the history could not be read)


@dataclass(frozen=True)
class ChatResponse:
    answer: Answer
    query: str
    source_documents: list[dict[str, Any]] = field(default_factory=list)
    evidence_score: float | None = None
    token_usage: dict[str, Any] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    sub_queries: list[str] = field(default_factory=list)
    standalone_query: str | None = None
    route: str = "rag"
    route_reason: str = "document_question"
    cached: bool = False
    inspector: dict[str, Any] | None = None
    document_scope: dict[str, Any] | None = None
    models: dict[str, Any] | None = None  # the embedders and the reranker the question used

    def to_json(self) -> dict[str, Any]:
        out = self.answer.to_json()
        out.update({"query": self.query, "route": self.route, "route_reason": self.route_reason,
                    "source_documents": self.source_documents,
                    "evidence_score": None if self.evidence_score is None else round(self.evidence_score, 4),
                    "token_usage": self.token_usage, "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
                    "sub_queries": self.sub_queries, "standalone_query": self.standalone_query,
                    "warnings": self.warnings, "cached": self.cached, "task": "qa",
                    "document_scope": self.document_scope})
        if self.inspector is not None:
            out["inspector"] = self.inspector
        if self.models is not None:
            out["models"] = self.models
        return out


class QueryPipeline:
    def __init__(self, settings: Settings, engine: RetrievalEngine, registry: BackendRegistry) -> None:
        self.settings = settings
        self.engine = engine
        self.registry = registry
        self.synthesizer = Synthesizer()
        self.cache = SemanticCache.from_settings(settings)
        self.tasks = TaskRunner(engine, registry)

    def request(self, query: str, indexes: list[str] | tuple[str, ...], **options: Any) -> ChatRequest:
        """A request with the settings' defaults; options given as `None` keep the default."""
        s = self.settings
        retrieval = self.engine.options(**{k: v for k, v in options.items() if k in _RETRIEVAL_KEYS})
        base: dict[str, Any] = {"context_expand": s.context_expand, "context_window_size": s.context_window_size,
                                "answer_top_k": s.reranker_top_k, "max_tokens": s.llm_max_tokens,
                                "evidence_tokens": s.llm_evidence_tokens, "prune": s.evidence_prune}
        base.update({k: v for k, v in options.items() if k not in _RETRIEVAL_KEYS and v is not None})
        for name in ("documents", "history", "warnings"):
            if name in base:
                base[name] = tuple(base[name])
        return ChatRequest(query=query, indexes=tuple(indexes), retrieval=retrieval, **base)

    def run(self, request: ChatRequest, emit: Emit | None = None,
            cancel: threading.Event | None = None) -> ChatResponse | TaskResponse:
        emit = checked(emit)  # every event through the declared table (generation/events.py)
        if request.indexes and (request.task != "qa" or nameless_summary(request.query)):
            done = self.tasks.run(request, emit, cancel)
            if done is not None:
                return done
        t0 = time.perf_counter()
        ledger = TokenLedger()
        decision = route_message(request.query, has_index=bool(request.indexes), force_rag=request.force_rag,
                        has_filters=bool(request.retrieval.filters), task=request.task)
        emit("analyze", {"query": request.query, "route": decision.route, "reason": decision.reason,
                         "kind": decision.kind, "indexes": list(request.indexes)})
        if decision.route == "direct" or not request.indexes:
            return self._direct(request, decision, emit, t0, cancel)
        chain = self.registry.chain(request.backend)
        generator = self._generator(chain[0], ledger) if self.settings.agent_llm else None
        query = self._standalone(request, generator)
        scope = CacheScope.of(request.indexes, _fingerprint(request))
        vector = None
        if request.session_id and self.settings.cache_enabled:
            vector = self.engine.embedder.embed([query])[0]
            hit = self.cache.get(request.session_id, scope, vector)
            if hit is not None:
                payload = dict(hit.payload, cached=True)
                emit("cache_hit", {"similarity": round(hit.similarity, 4), "query": hit.query})
                emit("complete", payload)
                return _from_cache(payload, request)
        doc_scope = self._scope(request, query, emit)
        if doc_scope is not None:
            ids = [d["document_id"] for d in doc_scope["documents"]]
            request = replace(request, retrieval=replace(
                request.retrieval, filters={**(request.retrieval.filters or {}), "document_id": ids}))
        parts = [query]
        if request.query_decompose:
            split = decompose(query, generator, self.settings.decompose_max_parts)
            if split.is_compound:
                parts = split.parts
                emit("decomposition", {"sub_queries": parts, "method": split.method})
        stages = Stages(emit)
        evidence = gather(self.engine, parts, request.indexes, request.retrieval, stages,
                          retry=self.settings.reformulate, generator=generator, rerank_query=query)
        candidates = evidence.candidates[: request.answer_top_k]
        if request.context_expand and request.context_window_size > 0 and candidates:
            found = candidates
            candidates = stages.run("expand", lambda: expand(self.engine, evidence, found, request.context_window_size,
                                                             request.indexes),
                                    started={"window": request.context_window_size, "count": len(found)},
                                    done=lambda out: {"count": len(out)})
        packed = self._pack(request, query, candidates, chain[0])
        options = SynthesisOptions(
            params=GenerationParams(max_tokens=request.max_tokens, model=request.model),
            repair=self.settings.answer_repair, extractive_sentences=self.settings.extractive_sentences,
            min_coverage=self.settings.refusal_min_coverage, min_similarity=self.settings.refusal_min_similarity,
            min_ask=self.settings.refusal_min_ask, min_meaning=self.settings.refusal_min_meaning,
            meaning=self._meaning(request.indexes),
            verify=request.verify,
            history=self._history(request))
        emit("sources", {"source_documents": _sources(packed)})  # shown while the model reads
        sims = [c.vector_similarity for c in evidence.result.candidates if c.vector_similarity is not None]
        answer = stages.run("synthesis", lambda: self.synthesizer.answer(
            query, packed.blocks, chain, options, emit, cancel, similarity=max(sims) if sims else None,
            absent=self._absent(query, packed, request.indexes)))
        timings = {**stages.timings_ms, **answer.timings_ms}
        timings["total_ms"] = (time.perf_counter() - t0) * 1000
        for stage, used in answer.usage.items():
            ledger.add(stage, used["prompt"], used["completion"])
        trace = answer_trace(parts, evidence.runs, evidence.retried_with, packed, answer.to_json(), doc_scope)
        response = ChatResponse(answer, request.query, _sources(packed), evidence.result.evidence_score,
                                {**ledger.with_legacy_keys(), "backend": answer.backend}, timings,
                                warnings=[*request.warnings, *evidence.result.warnings],
                                sub_queries=parts if len(parts) > 1 else [],
                                standalone_query=query if query != request.query else None,
                                route_reason=decision.reason, document_scope=doc_scope,
                                models=self.engine.models_used(request.indexes, evidence.result.final is not None),
                                inspector=trace)
        emit("inspector", trace)
        payload = response.to_json()
        if request.session_id and vector is not None and answer.answer_source != "refusal":
            self.cache.put(request.session_id, scope, vector, query, payload)
        emit("complete", payload)
        return response

    # -- stages --------------------------------------------------------------
    def _meaning(self, indexes: tuple[str, ...]) -> Meaning | None:
        """Quoting by meaning uses the first index's own embedder: its vectors are the ones it knows."""
        if not self.settings.quote_by_meaning or not indexes:
            return None
        return Meaning(self.engine.embedder_for(self.engine.table(indexes[0])))

    def _direct(self, request: ChatRequest, decision: RouteDecision, emit: Emit, t0: float,
                cancel: threading.Event | None) -> ChatResponse:
        """General chat (agent/direct.py): the configured model answers, with no citations."""
        emit("direct_answer", {"kind": decision.kind})
        params = GenerationParams(max_tokens=request.max_tokens, model=request.model)
        reply = answer_directly(request.query, request.history, decision.kind, self.registry.chain(request.backend),
                                params, emit, cancel)
        ledger = TokenLedger()
        if reply.prompt_tokens or reply.completion_tokens:
            ledger.add("direct", reply.prompt_tokens, reply.completion_tokens)
        answer = Answer(reply.text, "direct", [], reply.backend, reply.model)
        reason = decision.reason if decision.route == "direct" else "no_index"
        response = ChatResponse(answer, request.query, route="direct", route_reason=reason,
                                timings_ms={"total_ms": (time.perf_counter() - t0) * 1000},
                                token_usage=ledger.with_legacy_keys(), warnings=[*request.warnings, *reply.warnings])
        emit("complete", response.to_json())
        return response

    def _scope(self, request: ChatRequest, query: str, emit: Emit) -> dict[str, Any] | None:
        """"In the NDA, ..." restricts retrieval to that document when the name matches exactly one.

        Skipped when the request already filters by document; a name that
        matches nothing or several documents leaves retrieval unrestricted.
        """
        phrase = scope_phrase(query)
        filters = request.retrieval.filters or {}
        if phrase is None or "document_id" in filters or "document_name" in filters:
            return None
        found = resolve(phrase.name, catalogue(self.engine, request.indexes))
        if found.match is None:
            return None
        scope = {"name": phrase.name, "documents": [found.match.to_json()]}
        emit("document_scope", scope)
        return scope

    def _standalone(self, request: ChatRequest, generator: TextGenerator | None) -> str:
        turns = list(request.history[-self.settings.memory_turns:]) if self.settings.memory_turns else []
        return standalone_query(request.query, turns, generator).query if turns else request.query

    def _history(self, request: ChatRequest) -> str:
        turns = request.history[-min(4, self.settings.memory_turns):] if self.settings.memory_turns else ()
        return "\n".join(f"{t.role}: {t.text[:300]}" for t in turns)

    def _absent(self, query: str, packed: PackedContext, indexes: tuple[str, ...]) -> list[str]:
        """The question's names and codes that no selected index mentions (answering.md, "Refusing")."""
        texts = [f"{b.candidate.document_name}\n{b.candidate.heading_path}\n{b.source_text}" for b in packed.blocks]
        evidence, abbreviations = term_set(texts), initialisms("\n".join(texts))
        compounds = compound_set("\n".join(texts))
        missing = [w for w in specific_words(query)
                   if not term_set([w]) <= evidence and not spelled_elsewhere(w, query, abbreviations)]
        missing += [w for w in compound_words(query) if not mentions_compound(w, compounds)]
        if not missing:
            return []
        return unmentioned([self.engine.table(i) for i in indexes], missing)

    def _generator(self, backend: LLMBackend, ledger: TokenLedger) -> TextGenerator | None:
        if not backend.generative:
            return None

        def generate(prompt: str, *, max_tokens: int) -> str:
            done = backend.complete([Message("user", prompt)], GenerationParams(max_tokens=max_tokens))
            ledger.add("agent", done.prompt_tokens, done.completion_tokens)
            return done.text

        return generate

    def _pack(self, request: ChatRequest, query: str, candidates: list[Any], backend: LLMBackend) -> PackedContext:
        """The evidence the answerer reads (answering.md, "Evidence that fits, best first").

        Excerpts (the sentences that bear on the question) within the budget,
        the top-ranked block always among them: `evidence_tokens` for a model,
        which pays for every prompt token; more for quoting without one, which
        only chooses sentences (from the whole blocks the excerpts come from).
        With a model, quoting's wider evidence follows the prompt's blocks
        (`widen`): the quote that replaces a declined or failed answer, and
        the rules that refuse before generation, see what quoting alone sees.
        """
        window = backend.context_window(request.model)
        room = window - request.max_tokens - PROMPT_OVERHEAD_TOKENS - backend.count_tokens(request.query)
        if not backend.generative:
            return self._pack_within(request, query, candidates, backend,
                                     max(0, min(EXTRACTIVE_EVIDENCE_TOKENS, room)))
        prompt = self._pack_within(request, query, candidates, backend, max(0, min(request.evidence_tokens, room)))
        return widen(prompt, self._pack_within(request, query, candidates, backend, EXTRACTIVE_EVIDENCE_TOKENS))

    @staticmethod
    def _pack_within(request: ChatRequest, query: str, candidates: list[Any], backend: LLMBackend,
                     budget: int) -> PackedContext:
        bodies = {c.chunk_id: candidate_body(c) for c in candidates}
        shown = dict(bodies)
        if request.prune:
            cut = excerpts([bodies[c.chunk_id] for c in candidates], query, budget, backend.count_tokens)
            shown = {c.chunk_id: text for c, text in zip(candidates, cut)}
            candidates = [c for c in candidates if shown[c.chunk_id]]
        return pack(candidates, lambda texts: [backend.count_tokens(t) for t in texts], budget,
                    shape=lambda c: (shown[c.chunk_id], bodies[c.chunk_id]), keep_first=True)


def _fingerprint(request: ChatRequest) -> dict[str, Any]:
    options = asdict(request.retrieval)
    options.update(backend=request.backend, model=request.model, expand=request.context_expand,
                   window=request.context_window_size, decompose=request.query_decompose,
                   top_k=request.answer_top_k, max_tokens=request.max_tokens)
    return options


def _from_cache(payload: dict[str, Any], request: ChatRequest) -> ChatResponse:
    answer = Answer(payload["answer"], payload["answer_source"], payload["citations"], payload["backend"],
                    payload["model"], validation=payload.get("validation"))
    return ChatResponse(answer, request.query, payload["source_documents"], payload.get("evidence_score"),
                        payload["token_usage"], payload["timings_ms"], cached=True)


def _sources(packed: PackedContext) -> list[dict[str, Any]]:
    return [{"n": b.number, "chunk_id": b.candidate.chunk_id, "document_id": b.candidate.document_id,
             "document_name": b.candidate.document_name, "page_start": b.candidate.page_start,
             "page_end": b.candidate.page_end, "place": b.candidate.place, "score": round(b.candidate.score, 4),
             "text": b.source_text, "excerpt": b.text, "truncated": b.truncated, "in_prompt": b.in_prompt}
            for b in packed.blocks]

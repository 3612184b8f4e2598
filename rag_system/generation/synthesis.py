"""Evidence in, checked answer out: synthesize, validate, repair once, else extract or refuse.

The loop (Documentation/answering.md): refuse up front when the evidence does not mention the
question's key terms; otherwise stream an answer from the first backend that
works (falling through on failure), validate its citations natively, repair
once (attribution, then one model round with the validator's findings), and
if it is still invalid replace it with an extractive answer or a refusal.
`answer_source` always says which path produced the text.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import Any

from rag_system.generation.answer_rules import (
    SynthesisOptions, answers, cited_ask, cited_numbers, covered, extract, groundedness)
from rag_system.generation.events import Emit, checked
from rag_system.grounding.asks import ask_together
from rag_system.grounding.citations import (
    Validation,
    attribute,
    check,
    citation_records,
    corroborate,
    located_text,
    recite,
    validate,
)
from rag_system.generation.language import refusal_for
from rag_system.generation.llm import (
    ContextOverflowError,
    LLMBackend,
    LLMError,
    StreamResult,
)
from rag_system.generation.prompts import (
    REFUSAL_TEXT,
    grounded_messages,
    is_refusal,
    normalise_answer,
    repair_messages,
    strip_labels,
)
from rag_system.grounding.quantities import asks_quantity, other_quantity, states_quantity
from rag_system.generation.release import Release
from rag_system.generation.replying import model_reply
from rag_system.grounding.yes_no import (REPLY, backing_only, sources_answer, sources_reading,
                                         unsettled_reply_dropped, with_reply)
from rag_system.grounding.terms import coverage
from rag_system.retrieval.evidence import EvidenceBlock

log = logging.getLogger(__name__)


class Cancelled(Exception):
    """The client went away; stop generating and leave no partial state."""


@dataclass(frozen=True)
class Answer:
    answer: str
    answer_source: str  # llm | llm_repaired | extractive | refusal
    citations: list[dict[str, Any]]
    backend: str
    model: str
    validation: dict[str, Any] | None = None
    first_validation: dict[str, Any] | None = None
    refusal_reason: str | None = None
    coverage: float = 0.0
    confidence: float | None = None
    fallbacks: list[dict[str, str]] = field(default_factory=list)
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = {"answer": self.answer, "answer_source": self.answer_source, "citations": self.citations,
               "backend": self.backend, "model": self.model, "validation": self.validation,
               "first_validation": self.first_validation, "refusal_reason": self.refusal_reason,
               "coverage": round(self.coverage, 3), "fallbacks": self.fallbacks}
        if self.confidence is not None:
            out["confidence"] = round(self.confidence, 3)
        return out


class Synthesizer:
    """Stateless apart from the backends it is given; one call per question."""

    def answer(self, question: str, blocks: list[EvidenceBlock], chain: list[LLMBackend],
               options: SynthesisOptions = SynthesisOptions(), emit: Emit | None = None,
               cancel: threading.Event | None = None, similarity: float | None = None,
               absent: list[str] | None = None) -> Answer:
        """`similarity`: the best query-chunk cosine of the first stage, when a vector leg ran.

        `absent`: names and codes of the question that the searched indexes never
        mention (not just these blocks): the documents are about something else.
        A refusal is said in the question's language (`language.py`); its reason stays English.
        """
        emit = checked(emit)
        answer = self._answer(question, blocks, chain, options, emit, cancel, similarity, absent)
        if answer.answer_source == "refusal":
            return replace(answer, answer=refusal_for(question, REFUSAL_TEXT))
        if answer.answer_source in ("llm", "llm_repaired", "extractive"):
            # A yes/no question gets its "Yes" or "No" from what the cited passages say, when the
            # answer does not open with one (a quote, or a model that restated the passage).
            cited = [b for b in blocks if b.number in cited_numbers(answer.answer)]
            reply, open_ = sources_reading(question, cited, answer.answer)
            usage = answer.usage
            judge = next((b for b in chain if b.generative and b.name == answer.backend), None)
            if open_ and judge is not None and not (cancel is not None and cancel.is_set()) \
                    and not REPLY.match(answer.answer):
                # The rules read words; the model, shown one answer sentence at a time, reads meaning.
                judged = model_reply(question, answer.answer, judge, options.params.model)
                reply, usage = judged.reply, {**usage, "reply": judged.usage}
            said = with_reply(backing_only(question, answer.answer, reply), reply)
            if said != answer.answer:
                emit("answer_repaired", {"answer": said, "method": "reply"})
                kept = cited_numbers(said)  # quotes that settle nothing were left out with their sources
                return replace(answer, answer=said, usage=usage,
                               citations=[c for c in answer.citations if c["n"] in kept])
            return replace(answer, usage=usage)
        return answer

    def _answer(self, question: str, blocks: list[EvidenceBlock], chain: list[LLMBackend],
                options: SynthesisOptions, emit: Emit, cancel: threading.Event | None,
                similarity: float | None, absent: list[str] | None) -> Answer:
        cov, missing = coverage(question, [located_text(b) for b in blocks])
        if not blocks or absent or not covered(cov, similarity, options):
            why = ("no evidence was retrieved" if not blocks else
                   f"the documents never mention: {', '.join(absent[:6])}" if absent else
                   f"the documents do not mention: {', '.join(missing[:6])}")
            return self._refusal_answer(why, emit, cov)
        ask = ask_together(question, [b.source_text for b in blocks],
                           [f"{b.candidate.document_name}\n{b.candidate.heading_path}" for b in blocks]) \
            if options.min_ask > 0 else None  # REFUSAL_MIN_ASK=0 turns the ask rules off
        if ask is not None and not ask.found:  # the ask and its subject are never said together
            return self._refusal_answer(ask.reason(), emit, cov)
        evidence = "\n\n".join(b.rendered for b in blocks if b.in_prompt)
        fallbacks: list[dict[str, str]] = []
        for backend in chain:
            if not backend.generative:
                break
            try:
                return self._generate(question, evidence, blocks, backend, options, emit, cancel, cov, fallbacks)
            except (LLMError, ContextOverflowError) as exc:
                log.warning("backend %s failed, falling through: %s", backend.name, exc)
                fallbacks.append({"backend": backend.name, "error": str(exc)})
                emit("backend_fallback", {"from": backend.name, "error": str(exc)})
        text, why = extract(question, blocks, options)
        answer = self._refusal_answer(why, emit, cov) if text is None else \
            self._final(text, "extractive", blocks, "extractive", "none", cov, options)
        return replace(answer, fallbacks=fallbacks)

    # -- paths -------------------------------------------------------------
    def _generate(self, question: str, evidence: str, blocks: list[EvidenceBlock], backend: LLMBackend,
                  options: SynthesisOptions, emit: Emit, cancel: threading.Event | None, cov: float,
                  fallbacks: list[dict[str, str]]) -> Answer:
        t0 = time.perf_counter()
        result = StreamResult()
        messages = grounded_messages(question, evidence, options.history)
        prompt = backend.prompt_tokens(messages, options.params.model)
        rate = backend.prompt_rate()
        estimate = round(prompt / rate, 1) if rate else None
        read = sum(1 for b in blocks if b.in_prompt)
        passages = f"{read} passage{'s' if read != 1 else ''}"
        emit("generation_started", {"backend": backend.name, "passages": read, "prompt_tokens": prompt,
                                    "estimated_s": estimate,
                                    "message": f"Reading {passages}" + (f" (~{estimate:.0f} s)" if estimate else "")})
        first_token: float | None = None
        first_sentence: float | None = None  # when the first checked sentence went out
        read_blocks = [b for b in blocks if b.in_prompt]
        reply = sources_answer(question, read_blocks)
        repairs: list[str] = []  # how the sentences shown were repaired ("attribution", "citation")
        release = Release(lambda sentence: self._sentence(question, sentence, read_blocks, options, repairs, reply), emit,
                          ready=lambda text: answers(question, text, blocks, options),
                          opening=f"{reply.capitalize()}. " if reply else "")
        with closing(backend.stream(messages, options.params, result)) as pieces:
            for piece in pieces:
                if cancel is not None and cancel.is_set():
                    raise Cancelled()
                if first_token is None:
                    first_token = time.perf_counter()
                release.feed(piece)
                if release.released and first_sentence is None:
                    first_sentence = time.perf_counter()
        release.finish()
        if release.released and first_sentence is None:
            first_sentence = time.perf_counter()
        completion = result.completion
        assert completion is not None  # set by every backend when its stream ends
        timings = {"first_token_ms": ((first_token or time.perf_counter()) - t0) * 1000,
                   "generation_ms": (time.perf_counter() - t0) * 1000}
        if first_sentence is not None:
            timings["first_sentence_ms"] = (first_sentence - t0) * 1000
        text = strip_labels(normalise_answer(completion.text), blocks)
        log.debug("draft %r: %d sentence(s) shown, %d held", text[:400], len(release.released), len(release.held))
        if release.released:
            answer, first = self._after_release(question, text, release, repairs, blocks, backend, options, emit)
        else:  # nothing was shown: the whole draft goes to repair, quoting or a refusal
            answer, first = self._check(question, evidence, text, blocks, backend, options, emit)
        checked_model = answer.answer_source in ("llm", "llm_repaired")
        return replace(answer, first_validation=first, backend=backend.name, model=completion.model, coverage=cov,
                       usage={"synthesis": {"prompt": completion.prompt_tokens,
                                            "completion": completion.completion_tokens}, **answer.usage},
                       fallbacks=list(fallbacks), timings_ms={**answer.timings_ms, **timings},
                       confidence=(groundedness(answer.answer, blocks) if options.verify else None)
                       if checked_model else answer.confidence)

    def _sentence(self, question: str, sentence: str, read: list[EvidenceBlock], options: SynthesisOptions,
                  repairs: list[str], settled: str | None = None) -> str | None:
        """One finished sentence of the model's draft as it may be shown (its citations repaired), or None.
        A decline is never shown: the loop decides what follows it; nor a reply nothing checks (`settled`:
        what the passages answer a yes/no question, `yes_no.unsettled_reply_dropped`)."""
        text = strip_labels(normalise_answer(sentence), read)
        if not text or is_refusal(text):
            return None
        report = check(text, read, True, question, whole=False)
        if not report.valid and options.repair:
            fixed, count = attribute(text, read, report)
            if count:
                report, text = check(fixed, read, True, question, whole=False), fixed
                if report.valid:
                    repairs.append("attribution")
            for instead in (True, False):
                if report.valid:
                    break
                recited, moved = recite(text, read, report, instead)
                again = check(recited, read, True, question, whole=False) if moved else None
                if again is not None and again.valid:
                    report, text = again, recited
                    repairs.append("citation")
        return unsettled_reply_dropped(question, text, settled) if report.valid else None

    def _after_release(self, question: str, draft: str, release: Release, repairs: list[str],
                       blocks: list[EvidenceBlock], backend: LLMBackend, options: SynthesisOptions,
                       emit: Emit) -> tuple[Answer, dict[str, Any]]:
        """The answer is what was shown — checked sentences, those that failed dropped — and, when it
        does not give what the question asks (a number, the ask's words), a quote after it that does.
        Nothing shown is ever taken back."""
        shown = release.text
        read = [b for b in blocks if b.in_prompt]
        report = check(shown, read, True, question).with_attributed(repairs.count("attribution"))
        first = {**check(draft, read, True, question).to_json(), "dropped": len(release.held)}
        emit("citations", {"stage": "first", **first})
        source = "llm_repaired" if release.held or repairs else "llm"
        answers = options.min_ask <= 0 or cited_ask(question, shown, blocks)[0] >= options.min_ask
        if report.valid and answers:
            if release.held or repairs:
                emit("answer_repaired", {"answer": shown, "method": "dropped" if release.held else repairs[0],
                                         "dropped": len(release.held), "attributed": report.attributed})
            return self._accept(question, shown, source, blocks, backend, options, emit, report, keep=True), first
        tail, _ = extract(question, blocks, options, draft)
        if tail is None or tail.strip() in shown:
            return self._final(shown, source, blocks, backend.name, "", 0.0, options), first
        more = f"{shown}\n\n{tail}"
        emit("answer_repaired", {"answer": more, "method": "quote", "dropped": len(release.held)})
        return self._final(more, "llm_repaired", blocks, backend.name, "", 0.0, options), first

    def _check(self, question: str, evidence: str, text: str, blocks: list[EvidenceBlock],
               backend: LLMBackend, options: SynthesisOptions, emit: Emit) -> tuple[Answer, dict[str, Any]]:
        """The whole draft checked (nothing was shown); repaired by attribution, by re-citing, then by one
        model round whose tokens the answer's `usage` reports under `repair`."""
        if is_refusal(text):
            emit("citations", {"stage": "first", "valid": False, "refused": True})
            return self._after_model_refusal(question, blocks, options, emit), {"valid": False, "refused": True}
        read = [b for b in blocks if b.in_prompt]  # what the model may cite: a number it never saw is unknown
        text = unsettled_reply_dropped(question, text, sources_answer(question, read))
        report = check(text, read, True, question)
        first = report.to_json()
        emit("citations", {"stage": "first", **first})
        if report.valid:
            return self._accept(question, text, "llm", blocks, backend, options, emit, report), first
        if not options.repair:
            return self._replace(question, blocks, options, emit, "citations did not validate", text), first
        fixed, count = attribute(text, read, report)
        current = report
        if count:
            current = check(fixed, read, True, question).with_attributed(count)
            if current.valid:
                emit("answer_repaired", {"answer": fixed, "method": "attribution", "attributed": count})
                return self._accept(question, fixed, "llm_repaired", blocks, backend, options, emit, current), first
        for instead in (True, False):  # a fact the model read in one block and cited to another
            recited, moved = recite(fixed, read, current, instead)
            again = check(recited, read, True, question) if moved else None
            if again is not None and again.valid:
                again = again.with_attributed(count)
                emit("answer_repaired", {"answer": recited, "method": "citation", "recited": moved})
                return self._accept(question, recited, "llm_repaired", blocks, backend, options, emit, again), first
        repaired = backend.complete(repair_messages(question, evidence, text, report.problems(text)),
                                    options.params)
        used = {"repair": {"prompt": repaired.prompt_tokens, "completion": repaired.completion_tokens}}
        after = self._after_repair(question, strip_labels(normalise_answer(repaired.text), blocks), blocks, backend,
                                   options, emit)
        return replace(after, usage=used), first

    def _after_repair(self, question: str, second: str, blocks: list[EvidenceBlock], backend: LLMBackend,
                      options: SynthesisOptions, emit: Emit) -> Answer:
        if is_refusal(second):
            return self._after_model_refusal(question, blocks, options, emit)
        read = [b for b in blocks if b.in_prompt]
        second = unsettled_reply_dropped(question, second, sources_answer(question, read))
        report = check(second, read, True, question)
        if not report.valid:
            second, count = attribute(second, read, report)
            if count:
                report = check(second, read, True, question).with_attributed(count)
        if report.valid:
            emit("answer_repaired", {"answer": second, "method": "model", "attributed": report.attributed})
            return self._accept(question, second, "llm_repaired", blocks, backend, options, emit, report)
        return self._replace(question, blocks, options, emit, "citations still invalid after repair", second)

    def _accept(self, question: str, text: str, source: str, blocks: list[EvidenceBlock], backend: LLMBackend,
                options: SynthesisOptions, emit: Emit, report: Validation, keep: bool = False) -> Answer:
        """A valid model answer, if the blocks it cites hold what the question asks (rule 4, as for a quote).

        Every fact can be in its block and the answer still not be one: asked "What grind size should I
        use ...?", the model stated the warranty terms, each cited. Then it is quoted instead, and the
        quote meets the same rule.
        """
        if options.min_ask > 0 and not keep:  # `keep`: the text was shown, and the caller checked the ask
            share, lacking = cited_ask(question, text, blocks)
            if share < options.min_ask:
                return self._replace(question, blocks, options, emit,
                                     f"the passages it cites do not say: {', '.join(lacking[:6])}", text)
        more, added = corroborate(text, blocks, report)  # every other block stating the same facts, checked
        if added:
            again = check(more, blocks, True, question).with_attributed(report.attributed)
            if again.valid:
                emit("answer_corroborated", {"answer": more, "sentences": added})
                text, report = more, again
        return self._final(text, source, blocks, backend.name, "", 0.0, options, report)

    def _after_model_refusal(self, question: str, blocks: list[EvidenceBlock], options: SynthesisOptions,
                             emit: Emit) -> Answer:
        """The model declined. Quote instead when the passages hold what the question asks.

        The rules before generation (names, coverage, the ask with its subject)
        have already passed, and the quote must pass the ask rule too: then the
        passages say something the question asks, and a small model's decline
        is the weaker evidence. On the whole mixed gold set the 1.5B model
        declined 11 rows, 8 of which quoting cites the fact for; on the answer
        sets trusting declines kept one unanswerable row refused (answering.md).
        """
        text, why = extract(question, blocks, options)
        if text is None:
            return self._refusal_answer(f"the model found no answer in the evidence; {why}", emit)
        emit("answer_replaced", {"answer": text, "answer_source": "extractive",
                                 "reason": "the model declined but the passages hold what the question asks"})
        return self._final(text, "extractive", blocks, "extractive", "none", 0.0, options)

    def _replace(self, question: str, blocks: list[EvidenceBlock], options: SynthesisOptions, emit: Emit,
                 reason: str, draft: str = "") -> Answer:
        """Quote instead of the model's answer, choosing sentences by the question and the draft.

        The draft failed its checks, but it usually names the right passage and its
        words ("PTO = smoothed_rtt + ..."): the sentences quoted are still verbatim,
        and must still hold what the question asks. Not a draft that gives no number or formula to a
        question asking for one: its words lead to the passage it was vague about (rfc_q16, "computed
        based on the packet number spaces" to the PTO overview, not "PTO = smoothed_rtt + ..."), nor one that
        gives a quantity of another kind than asked (a pressure for a temperature leads to the pressure).
        """
        if (asks_quantity(question) and not states_quantity(draft, question)) or other_quantity(question, draft):
            draft = ""
        text, why = extract(question, blocks, options, draft)
        if text is None:
            return self._refusal_answer(f"{reason}; {why}", emit)
        emit("answer_replaced", {"answer": text, "answer_source": "extractive", "reason": reason})
        return self._final(text, "extractive", blocks, "extractive", "none", 0.0, options)

    def _refusal_answer(self, reason: str, emit: Emit, cov: float = 0.0) -> Answer:
        emit("refusal", {"reason": reason})
        return Answer(REFUSAL_TEXT, "refusal", [], "none", "", refusal_reason=reason, coverage=cov)

    def _final(self, text: str, source: str, blocks: list[EvidenceBlock], backend: str, model: str,
               cov: float, options: SynthesisOptions, report: Validation | None = None) -> Answer:
        report = report or validate(text, blocks)
        if not report.valid:  # only reachable for an extractive answer; a bug if it happens
            log.error("extractive answer failed validation: %s", report.to_json())
            return Answer(REFUSAL_TEXT, "refusal", [], backend, model, refusal_reason="internal: invalid extract")
        return Answer(text, source, citation_records(text, blocks, report), backend, model,
                      validation=report.to_json(), coverage=cov)

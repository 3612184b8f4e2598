"""Summary and compare tasks on real evidence blocks and the real (native) citation validator.

Where a model is needed, the scripted backend of test_synthesis stands in for
the external LLM: it returns exactly the text a test needs (a valid section, an
invented one), so the keep / replace-by-extract rule is exercised per part.
"""

from __future__ import annotations

import docent_native
import pytest

from rag_system.generation.llm import GenerationParams, estimate_tokens
from rag_system.generation.registry import ExtractiveBackend
from rag_system.retrieval.evidence import EvidenceBlock
from rag_system.retrieval.packer import evidence_label
from rag_system.retrieval.types import Candidate
from rag_system.tasks.compare import CompareError, compare
from rag_system.tasks.documents import DocumentRef, normalise, resolve
from rag_system.tasks.model import ModelNotes, split_headed, windows
from rag_system.tasks.outcome import add_usage
from rag_system.tasks.parts import NOT_STATED
from rag_system.tasks.routing import detect, names_of, scope_phrase
from rag_system.tasks.summary import SECTIONS, summarise
from tests.unit.test_synthesis import Scripted

LEASE = [
    ("PURPOSE", 1, "This lease agreement is entered into as of March 3, 2025, between Harbour Estates Ltd "
     "(\"Landlord\") and Quillwort Analytics LLC (\"Tenant\"). The purpose of this lease is to rent office "
     "space at 12 Dock Road."),
    ("RENT", 1, "The Tenant shall pay a monthly rent of $4,500 on the first day of each month. A late fee "
     "of 5% applies to payments received after the tenth day."),
    ("TERM", 2, "The lease term is twenty-four (24) months starting on April 1, 2025."),
    ("EXCLUSIONS", 2, "The Landlord is not responsible for damage caused by the Tenant, except where the "
     "damage results from structural defects."),
]
AUDIT = [
    ("SCOPE", 1, "This audit report reviews the payroll controls of Quillwort Analytics LLC for fiscal "
     "year 2024. The review was conducted by sampling 120 payroll records."),
    ("FINDINGS", 1, "We found that 3 of 120 records lacked a manager approval. Overall the controls are "
     "operating effectively."),
]


def blocks_of(doc_id: str, name: str, sections: list[tuple[str, int, str]], first: int = 1) -> list[EvidenceBlock]:
    out = []
    for i, (heading, page, text) in enumerate(sections):
        cand = Candidate(chunk_id=f"{doc_id}-{i}", document_id=doc_id, document_name=name, chunk_index=i,
                         page_start=page, page_end=page, heading_path=f"{name} > {heading}",
                         block_type="paragraph", text=text, metadata="{}")
        out.append(EvidenceBlock(first + i, cand, evidence_label(first + i, cand), text, estimate_tokens(text)))
    return out


LEASE_DOC = DocumentRef("kb", "lease1", "03_office_lease.pdf")
AUDIT_DOC = DocumentRef("kb", "audit1", "payroll-audit-report.docx")
PARAMS = GenerationParams(max_tokens=700)


def no_events(event: str, data: dict) -> None:
    return None


def assert_verbatim_and_valid(part_text: str, blocks: list[EvidenceBlock]) -> None:
    report = docent_native.validate_citations(part_text, [b.text for b in blocks])
    assert report["valid"], (part_text, report)
    for s in report["sentences"]:
        sentence = part_text[s["start"]:s["end"]]
        body = " ".join(sentence.replace(f"[{s['citations'][0]}]", "").split())
        assert body in " ".join(blocks[s["citations"][0] - 1].text.split()), sentence


# -- summary --------------------------------------------------------------------------------
def test_extractive_summary_has_every_section_cited_in_document_order():
    blocks = blocks_of("lease1", LEASE_DOC.document_name, LEASE)
    outcome = summarise(LEASE_DOC, blocks, [ExtractiveBackend()], PARAMS, no_events)
    assert [p.key for p in outcome.parts] == [p.key for p, _ in SECTIONS]
    assert outcome.backend == "extractive"
    for part in outcome.parts:
        if part.source == "not_stated":
            assert part.shown == NOT_STATED and part.validation is None
            continue
        assert part.source == "extractive" and part.validation["valid"]
        assert_verbatim_and_valid(part.text, blocks)
        cited = [int(n) for n in __import__("re").findall(r"\[(\d+)\]", part.text)]
        assert cited == sorted(cited), "sentences of a section follow document order"
    by_key = {p.key: p for p in outcome.parts}
    assert "5%" in by_key["figures"].text or "$4,500" in by_key["figures"].text
    assert "not responsible" in by_key["limitations"].text
    assert "### Conclusions" in outcome.answer and outcome.answer.startswith("**Summary of 03_office_lease.pdf**")


def test_a_section_without_evidence_says_so():
    blocks = blocks_of("lease1", LEASE_DOC.document_name, LEASE[2:3])  # only the term sentence
    outcome = summarise(LEASE_DOC, blocks, [], PARAMS, no_events)
    sources = {p.key: p.source for p in outcome.parts}
    assert sources["conclusions"] == "not_stated"
    assert outcome.answer.count(NOT_STATED) == sum(1 for s in sources.values() if s == "not_stated") >= 2


def test_model_sections_kept_when_valid_replaced_when_invented():
    blocks = blocks_of("lease1", LEASE_DOC.document_name, LEASE)
    script = ("## Purpose and background\nThe lease rents office space at 12 Dock Road [1].\n"
              "## Method or content\nThe tenant pays rent monthly [2].\n"
              "## Key figures and rules\nThe rent is $9,999 per week and includes free parking [3].\n"
              "## Conclusions\nNot stated in the document.\n"
              "## Limitations\n**Limitations:** The landlord is not responsible for damage caused by the tenant [4].")
    backend = Scripted(script)
    outcome = summarise(LEASE_DOC, blocks, [backend, ExtractiveBackend()], PARAMS, no_events)
    by_key = {p.key: p for p in outcome.parts}
    assert by_key["purpose"].source == "llm" and by_key["purpose"].validation["valid"]
    assert by_key["limitations"].source == "llm"
    assert by_key["figures"].source == "extractive" and "model text replaced" in by_key["figures"].note
    assert "$9,999" not in outcome.answer and "%" in by_key["figures"].text
    assert by_key["conclusions"].source in ("extractive", "not_stated")
    assert outcome.backend == "scripted" and len(backend.prompts) == 1
    assert "[1]" in backend.prompts[0][1].content and "## Limitations" in backend.prompts[0][1].content


def test_long_document_is_mapped_over_windows_and_reduced_in_order():
    blocks = blocks_of("lease1", LEASE_DOC.document_name, LEASE)
    groups = windows(blocks, budget=64)
    assert [[b.number for b in g] for g in groups] == [[1], [2, 3], [4]]
    small = Scripted("## Purpose and background\nThe lease rents office space at 12 Dock Road [1].",
                     "## Key figures and rules\nThe monthly rent is $4,500 [2].",
                     "## Key figures and rules\nThe landlord is not responsible for damage caused by the tenant [4].")
    small.context_window = lambda model=None: PARAMS.max_tokens + 500 + 64  # type: ignore[method-assign]
    outcome = summarise(LEASE_DOC, blocks, [small], PARAMS, no_events)
    figures = {p.key: p for p in outcome.parts}["figures"]
    assert figures.source == "llm" and figures.validation["valid"]
    assert figures.text.index("[2]") < figures.text.index("[4]")
    assert outcome.extra["map_reduce"] == {"windows": 3, "calls": 3} and len(small.prompts) == 3


# -- compare --------------------------------------------------------------------------------
def test_extractive_comparison_is_a_table_of_cited_or_not_stated_cells():
    lease = blocks_of("lease1", LEASE_DOC.document_name, LEASE)
    audit = blocks_of("audit1", AUDIT_DOC.document_name, AUDIT, first=len(lease) + 1)
    every = lease + audit
    outcome = compare([LEASE_DOC, AUDIT_DOC], [lease, audit], every, [ExtractiveBackend()], PARAMS, no_events)
    table = outcome.extra["table"]
    assert [r["key"] for r in table["rows"]] == ["scope", "parties", "numbers", "obligations", "dates", "differences"]
    for row in table["rows"]:
        assert len(row["cells"]) == 2
        for cell in row["cells"]:
            assert cell["text"] == NOT_STATED or cell["validation"]["valid"]
    for part in outcome.parts:
        if part.text:
            assert_verbatim_and_valid(part.text, every)
            own = lease if part.document_id == "lease1" else audit
            assert all(c["chunk_id"].startswith(part.document_id) for c in part.citations), "a cell cites its own document"
            assert {c["n"] for c in part.citations} <= {b.number for b in own}
    lines = outcome.answer.splitlines()
    assert lines[2] == "| Dimension | 03_office_lease.pdf | payroll-audit-report.docx |"
    assert all(line.count("|") - line.count("\\|") == 4 for line in lines[2:])


def test_compare_needs_two_to_four_documents():
    lease = blocks_of("lease1", LEASE_DOC.document_name, LEASE)
    with pytest.raises(CompareError):
        compare([LEASE_DOC], [lease], lease, [], PARAMS, no_events)


# -- names and routing ----------------------------------------------------------------------------
DOCS = [DocumentRef("kb", "a" * 64, "01_acquisition_agreement.pdf"), DocumentRef("kb", "b" * 64, "07_nda.pdf"),
        DocumentRef("kb", "c" * 64, "lease-2023.txt"), DocumentRef("kb", "d" * 64, "lease-2024.txt"),
        DocumentRef("kb", "e" * 64, "06_legal_opinion.pdf"), DocumentRef("kb", "f" * 64, "ab" * 32 + "_audit-report.pdf")]


@pytest.mark.parametrize("name, expected", [
    ("the NDA", "07_nda.pdf"), ("07_nda.pdf", "07_nda.pdf"), ("Acquisition Agreement", "01_acquisition_agreement.pdf"),
    ("the agreement", "01_acquisition_agreement.pdf"), ("non-disclosure agreement", "07_nda.pdf"),
    ("lease 2024", "lease-2024.txt"), ("the opinion letter", "06_legal_opinion.pdf"), ("b" * 12, "07_nda.pdf"),
    ("aquisition agreemnt", "01_acquisition_agreement.pdf"), ("the audit report", "ab" * 32 + "_audit-report.pdf"),
])
def test_names_resolve_uniquely(name, expected):
    found = resolve(name, DOCS)
    assert found.match is not None and found.match.document_name == expected, found


def test_ambiguous_and_unknown_names_are_not_guessed():
    lease = resolve("the lease", DOCS)
    assert lease.match is None and lease.ambiguous
    assert {c.document_name for c in lease.candidates} == {"lease-2023.txt", "lease-2024.txt"}
    unknown = resolve("quarterly forecast", DOCS)
    assert unknown.match is None and not unknown.candidates
    assert normalise("The Due-Diligence report.pdf") == "due diligence report"


@pytest.mark.parametrize("message, task, names", [
    ("summarize the NDA", "summary", ("the NDA",)),
    ("Please summarise 02_due_diligence_report.pdf.", "summary", ("02_due_diligence_report.pdf",)),
    ("Give me a summary of the lease", "summary", ("the lease",)),
    ("compare the NDA and the acquisition agreement", "compare", ("the NDA", "the acquisition agreement")),
    ("Compare A, B and C", "compare", ("A", "B", "C")),
    ("What are the differences between the NDA and the legal opinion?", "compare", ("the NDA", "the legal opinion")),
    ("How do lease 2023 and lease 2024 differ?", "compare", ("lease 2023", "lease 2024")),
])
def test_task_detection(message, task, names):
    intent = detect(message)
    assert intent is not None and (intent.task, intent.names) == (task, names)


@pytest.mark.parametrize("message", ["compare the notice periods", "What is the price?",
                                     "Is the summary of section 2 accurate?", "In the NDA, how long is the term?"])
def test_questions_are_not_tasks(message):
    assert detect(message) is None


def test_explicit_task_names_and_scope_phrase():
    assert names_of("the NDA", "summary") == ("the NDA",)
    assert names_of("lease 2023 vs lease 2024", "compare") == ("lease 2023", "lease 2024")
    scope = scope_phrase("In the NDA, how long does it last?")
    assert scope is not None and (scope.name, scope.rest) == ("the NDA", "how long does it last?")
    assert scope_phrase("According to lease-2024.txt: what is the rent?").name == "lease-2024.txt"
    assert scope_phrase("How long does the NDA last?") is None


def test_model_headings_parsed_loosely():
    text = ("**Scope:** covers rent [1]\n\n### Parties or subjects\n- Landlord and tenant [2]\n"
            "1. Key numbers\n$4,500 [3]\nDates: April 1, 2025 [4]")
    keys = [("scope", "Scope"), ("parties", "Parties or subjects"), ("numbers", "Key numbers"), ("dates", "Dates")]
    assert split_headed(text, keys) == {"scope": "covers rent [1]", "parties": "Landlord and tenant [2]",
                                        "numbers": "$4,500 [3]", "dates": "April 1, 2025 [4]"}


def test_model_cells_are_checked_one_by_one_and_differences_stay_extractive():
    lease = blocks_of("lease1", LEASE_DOC.document_name, LEASE)
    audit = blocks_of("audit1", AUDIT_DOC.document_name, AUDIT, first=len(lease) + 1)
    backend = Scripted("Scope: The lease rents office space at 12 Dock Road [1].\n"
                       "Key numbers: The monthly rent is $4,500 [2].\nDates: The audit ran in 1999 [2].\n"
                       "Parties or subjects: The review sampled 120 payroll records [5].",
                       "## Scope\nThe audit report reviews payroll controls for fiscal year 2024 [5].\n"
                       "## Key numbers\nThe review sampled 120 payroll records [5].")
    outcome = compare([LEASE_DOC, AUDIT_DOC], [lease, audit], lease + audit, [backend, ExtractiveBackend()],
                      PARAMS, no_events)
    cells = {(p.document_id, p.key): p for p in outcome.parts}
    assert cells[("lease1", "scope")].source == "llm" and cells[("lease1", "numbers")].source == "llm"
    assert cells[("audit1", "scope")].source == "llm" and "[5]" in cells[("audit1", "scope")].text
    assert cells[("lease1", "dates")].source == "extractive" and "1999" not in outcome.answer
    assert cells[("lease1", "differences")].source in ("extractive", "not_stated")
    foreign = cells[("lease1", "parties")]  # a true sentence, but from the other document
    assert foreign.source != "llm" and "another document" in foreign.note
    assert len(backend.prompts) == 2 and outcome.backend == "scripted"
    assert all(p.validation["valid"] for p in outcome.parts if p.validation)


def test_usage_is_added_into_a_new_dict() -> None:
    notes = ModelNotes(calls=2, usage={"prompt": 30, "completion": 7})
    first = add_usage({}, "compare", notes)
    both = add_usage(first, "compare", notes)
    assert first == {"compare": {"prompt": 30, "completion": 7}}  # the caller's dict is left as it was
    assert both == {"compare": {"prompt": 60, "completion": 14}}
    assert add_usage(both, "summary", ModelNotes()) is both  # no call, nothing to add

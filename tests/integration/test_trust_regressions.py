"""The answers issue 18 found untrustworthy, over real documents and the real packaged models.

Each case was a cited invention or a lost answer before: a CEO's salary cited to
a signature block, a PostgreSQL port cited to a QUIC passage, "yes" against
"doesn't handle", the top-ranked chunk pushed out by context expansion, and a
sub-query that lost its subject. Both answering paths run: quoting (extractive)
and the packaged model (llamacpp), whose exact wording varies, so the model
cases assert what must hold for any wording.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag_system.agent.pipeline import QueryPipeline
from rag_system.generation.registry import BackendRegistry
from rag_system.indexing.builder import build_index
from rag_system.retrieval.engine import RetrievalEngine
from testkit import EVAL_DATA

ACQUISITION = EVAL_DATA / "localgpt" / "corpora" / "acquisition"
RFCS = EVAL_DATA / "localgpt" / "corpora" / "rfc"
# The questions are about the shared corpora, read where they lie (never copied into the repository).
pytestmark = pytest.mark.skipif(not ACQUISITION.is_dir(), reason=f"shared eval data not at {EVAL_DATA}")
BACKENDS = ["extractive", pytest.param("llamacpp", marks=pytest.mark.slow)]


def _pipeline(root: Path, embedder, sources: list[Path], **env: str):  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings

    settings = load_settings(environ={"DOCENT_DATA_DIR": str(root / "data"), "OLLAMA_HOST": "http://127.0.0.1:9",
                                      "SEMANTIC_CACHE": "false", **env}, dotenv_path=None)
    build_index(sources, "t", settings, embedder=embedder)
    return QueryPipeline(settings, RetrievalEngine(settings, embedder), BackendRegistry(settings))


@pytest.fixture(scope="module")
def acquisition(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    return _pipeline(tmp_path_factory.mktemp("acq"), embedder, [ACQUISITION])


@pytest.fixture(scope="module")
def rfcs(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    names = ["RFC 8999 - Version-Independent Properties of QUIC.txt", "RFC 9412 - The ORIGIN Extension in HTTP3.txt"]
    return _pipeline(tmp_path_factory.mktemp("rfc"), embedder, [RFCS / n for n in names])


def ask(pipe: QueryPipeline, query: str, **options):  # type: ignore[no-untyped-def]
    events: list[tuple[str, dict]] = []
    response = pipe.run(pipe.request(query, ["t"], **options), lambda e, d: events.append((e, d)))
    return response.to_json(), events


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in re.findall(r"\d[\d,]*", re.sub(r"\[\d+\]", " ", text))}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_salary_no_document_states_is_refused_not_cited_to_a_signature_block(acquisition, backend):
    payload, _ = ask(acquisition, "What is the annual salary of TechCorp's CEO James Mitchell?", backend=backend)
    assert payload["answer_source"] == "refusal", payload["answer"]
    assert payload["citations"] == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_port_of_software_the_documents_never_mention_is_refused_before_any_model_runs(rfcs, backend):
    payload, events = ask(rfcs, "What is the default TCP port of a PostgreSQL server?", backend=backend)
    assert payload["answer_source"] == "refusal"
    assert "PostgreSQL" in payload["refusal_reason"]
    assert "token" not in [e for e, _ in events]  # refused before generation: nothing to invent


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_number_an_answer_states_is_in_the_block_it_cites(acquisition, backend):
    payload, _ = ask(acquisition, "What is the purchase price in the acquisition agreement?", backend=backend)
    assert payload["answer_source"] != "refusal", payload.get("refusal_reason")
    blocks = {s["n"]: s["text"] for s in payload["source_documents"]}
    for sentence in re.split(r"(?<=[.!?])\s+|\n", payload["answer"]):
        cited = [int(n) for n in re.findall(r"\[(\d+)\]", sentence)]
        if not cited:
            continue
        said = _numbers(" ".join(blocks[n] for n in cited))
        assert _numbers(sentence) <= said, (sentence, cited)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_documented_no_is_never_answered_with_yes(acquisition, backend):
    # 07_nda.pdf: "Nothing in this NDA grants any rights to intellectual property, ..."
    payload, _ = ask(acquisition, "Does the NDA grant TechCorp any rights to StartupXYZ's intellectual property?",
                     backend=backend)
    answer = payload["answer"].lower()
    assert not answer.lstrip("- ").startswith("yes"), payload["answer"]
    if payload["answer_source"] != "refusal":
        assert re.search(r"\b(?:no|not|nothing|never|none)\b|n't", answer), payload["answer"]
        assert all(not c["opposite"] for c in (payload["validation"] or {}).get("claims", []))


def test_the_top_ranked_chunk_reaches_the_prompt_when_expansion_makes_passages_large(acquisition):
    query = "How long does the NDA remain in effect?"
    plain, _ = ask(acquisition, query, backend="extractive", context_expand=False)
    # Seven chunks of the NDA in one passage, against a budget that holds about one: the passage
    # used to be dropped whole (less than half fitted) and the answer was "no evidence".
    wide, events = ask(acquisition, query, backend="extractive", context_expand=True, context_window_size=3,
                       evidence_tokens=120)
    assert "context_expand_done" in [e for e, _ in events]
    assert wide["source_documents"], "nothing reached the prompt"
    assert wide["source_documents"][0]["chunk_id"] == plain["source_documents"][0]["chunk_id"]
    assert "three (3) years" in wide["source_documents"][0]["excerpt"]
    assert any(s["n"] == 1 for s in wide["citations"]) and "three (3) years" in wide["answer"]


@pytest.mark.slow
def test_the_model_reads_its_budget_and_its_fallback_keeps_quotings_wider_evidence(acquisition):
    query = "How long does the NDA remain in effect?"
    payload, events = ask(acquisition, query, backend="llamacpp")
    shown = [s["in_prompt"] for s in payload["source_documents"]]
    # the prompt's blocks first (the top-ranked among them), then what only quoting may use
    assert shown and shown[0] and shown == sorted(shown, reverse=True), shown
    started = next(d for e, d in events if e == "generation_started")
    assert started["passages"] == sum(shown)
    quoting, _ = ask(acquisition, query, backend="extractive")
    assert quoting["source_documents"][0]["chunk_id"] in {s["chunk_id"] for s in payload["source_documents"]}
    assert len(payload["source_documents"]) >= len(quoting["source_documents"]) - 1


def test_sub_queries_keep_the_subject_of_the_question(acquisition):
    payload, events = ask(acquisition, "How many employees does StartupXYZ have, and how are they split?",
                          backend="extractive")
    split = [d for e, d in events if e == "decomposition"]
    assert split and all("StartupXYZ" in q for q in split[0]["sub_queries"]), split
    searched = [c["chunk_id"] for s in payload["inspector"]["searches"] for leg in s["legs"].values() for c in leg]
    assert searched and payload["answer_source"] != "refusal"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    corpora = EVAL_DATA / "localgpt" / "corpora"
    return _pipeline(tmp_path_factory.mktemp("mixed"), embedder,
                     [corpora / "atlas7_service_manual.pdf", corpora / "northwind_leave_policy.pdf"])


def _gold(name: str) -> list[str]:
    import json

    path = EVAL_DATA / "localgpt" / "goldset" / f"{name}.jsonl"
    return [json.loads(line)["query"] for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("corpus, gold", [("acquisition", "acquisition"), ("mixed", "atlas7"), ("mixed", "hr")])
def test_no_answer_quote_or_source_card_carries_a_chunk_context_line(request, corpus, gold):
    pipe = request.getfixturevalue(corpus)
    context = re.compile(r"^\s*(?:- )?[\w.-]+\.pdf > ")
    for query in _gold(gold):
        payload, _ = ask(pipe, query, backend="extractive")
        texts = [payload["answer"], *(c["quote"] for c in payload["citations"]),
                 *(s["text"] for s in payload["source_documents"]),
                 *(s["excerpt"] for s in payload["source_documents"])]
        for text in texts:
            for line in text.split("\n"):
                assert not context.match(line), (query, line)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("query", [
    "What is the annual salary of a Grade 7 employee?",
    # With the company named, four verbatim sentences were given (2026-12-03): every section of the
    # policy is headed "Northwind Robotics", which stood in for half of the subject beside "base salary".
    "What is the annual salary of a Grade 7 employee at Northwind Robotics?",
])
def test_a_salary_asked_of_a_grade_is_refused_where_the_grade_and_salary_are_paragraphs_apart(mixed, backend,
                                                                                             query):
    # A new user's trial (2026-12-03): the default model answered "The annual salary of a Grade 7 employee
    # is 23 days of paid annual leave per calendar year. [1]". Every fact in it is in [1], and [1] says
    # "base salary" two sections later, so every check after generation passed.
    payload, events = ask(mixed, query, backend=backend)
    assert payload["answer_source"] == "refusal", payload["answer"]
    assert "salary" in payload["refusal_reason"] and "Grade" in payload["refusal_reason"]
    assert "token" not in [e for e, _ in events]  # refused before generation: nothing to invent


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("query", ["How many days of annual leave do employees at Grade 7 and above accrue?",
                                   "How many days of annual leave do Northwind Robotics employees at Grade 7 "
                                   "and above accrue?"])
def test_the_same_policy_answers_what_it_says_of_the_grade(mixed, backend, query):
    payload, _ = ask(mixed, query, backend=backend)
    assert payload["answer_source"] != "refusal", payload.get("refusal_reason")
    assert "28" in payload["answer"], payload["answer"]


DEPLOY = """# Deploying the service

List the allowed hosts of the server in hosts.conf, one per line.
The server speaks TLS 1.3 only; section 1.4 explains how to rotate its certificate.
Use the numpy package to solve the capacity model before you size the cluster.
"""


@pytest.fixture(scope="module")
def deploy_notes(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("deploy")
    (root / "docs").mkdir()
    (root / "docs" / "deploy.md").write_text(DEPLOY, encoding="utf-8")
    return _pipeline(root, embedder, [root / "docs"])


@pytest.mark.parametrize("query, name", [
    ("How do I set ALLOWED_HOSTS for the server?", "ALLOWED_HOSTS"),  # "allowed hosts" is not the setting
    ("What does TLS 1.4 change for the server?", "TLS 1.4"),  # "TLS 1.3" and "1.4" are written, apart
    ("What does numpy.linalg.solve return for the capacity model?", "numpy.linalg.solve"),
])
def test_identifiers_and_versions_the_documents_never_write_are_refused_before_any_model_runs(
        deploy_notes, query, name):
    payload, events = ask(deploy_notes, query, backend="extractive")
    assert payload["answer_source"] == "refusal", payload["answer"]
    assert name in payload["refusal_reason"]
    assert "token" not in [e for e, _ in events]


def test_the_version_the_documents_write_is_answered(deploy_notes):
    payload, _ = ask(deploy_notes, "Which TLS version does the server speak?", backend="extractive")
    assert payload["answer_source"] != "refusal", payload.get("refusal_reason")
    assert "TLS 1.3" in payload["answer"]

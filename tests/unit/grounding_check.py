"""How the verifier's unit tests check one claim against one passage, and the passages they share.

Why a module: `test_grounding_verifier.py` (the kinds of false claim, true restatements, quotes,
wording) and `test_grounding_rules.py` (one case per rule) read claims the same way, through the
public `verify`, as synthesis and `POST /verify` do.
"""

from __future__ import annotations

from rag_system.grounding.findings import SentenceCheck
from rag_system.grounding.verifier import Source, verify


def check(passage: str, claim: str, question: str = "") -> SentenceCheck:
    """The one sentence `claim` checked against `passage` cited as [1]."""
    result = verify(claim if "[" in claim else f"{claim} [1]", [Source(1, passage)], question)
    assert len(result.sentences) == 1, result.sentences
    return result.sentences[0]


def kinds(sentence: SentenceCheck) -> set[str]:
    return {f.kind for f in sentence.findings}


LEAVE = ("Employees at Grade 7 and above accrue 28 days. Any absence longer than 10 consecutive working days "
         "requires written approval from a director.")
PORTS = "The primary server listens on 8443 and the backup on 9443."
APPROVERS = "Alice approves travel requests; Bob approves expense claims."
FORM = ("Filing Date: January 10, 2025 Transaction Value: $45,000,000 HSR Filing Fee: $30,000 "
        "Buyer's Counsel: Morrison & Associates LLP Seller's Counsel: Wilson & Partners LLP "
        "Escrow Agent: First National Trust")

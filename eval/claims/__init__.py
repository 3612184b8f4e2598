"""A hand-written claims set for checking a citation verifier.

Each row is one answer sentence that cites real passages of the shared corpora
or of Debian's documentation packages, labelled supported, contradicted or
unsupported; `eval.claims.build` resolves the passages from the documents.
See Documentation/answer-sets.md, "Claims set".
"""

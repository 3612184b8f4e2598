"""The MCP server: Docent's indexes as tools for agents (Documentation/mcp.md), on the official MCP SDK.

Tools: `list_indexes`, `search` (passages with document, pages and chunk id), `ask` (the checked
answer: its text with the sources, and the same as structured content) and `verify` (any text, each
sentence marked supported, contradicted or unsupported by the index, with findings and evidence). Each tool call runs with the
credential of whoever called: over stdio the token the MCP client gave this process, over HTTP the
bearer of that request (`rag_system/mcp/docent.py` says where it is checked). A refusal or a bad
index comes back as a tool error (`isError`), never as a crash of the server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import anyio
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from rag_system.mcp.docent import Docent, DocentError

INSTRUCTIONS = ("Docent answers questions from a team's own documents. Call list_indexes first, then search "
                "for passages or ask for an answer whose every sentence cites a page the system checked.")
MAX_K = 50


class IndexInfo(BaseModel):
    name: str = Field(description="the index's display name")
    id: str = Field(description="the index's id (any of the two works as `index`)")
    chunks: int | None = Field(description="passages stored (null where the credential cannot see counts)")


class IndexList(BaseModel):
    indexes: list[IndexInfo]


class Passage(BaseModel):
    document: str
    page_start: int
    page_end: int
    chunk_id: str
    score: float
    text: str


class SearchResult(BaseModel):
    index: str
    query: str
    passages: list[Passage]


class Citation(BaseModel):
    n: int = Field(description="the [n] marker in the answer")
    document: str
    page_start: int
    page_end: int
    chunk_id: str
    quote: str = ""


class Answer(BaseModel):
    question: str
    index: str
    answer: str
    answer_source: str = Field(description="llm, llm_repaired, extractive or refusal")
    citations: list[Citation]


class Evidence(BaseModel):
    n: int = Field(description="the source's number in `sources` of the response")
    quote: str
    document: str = ""
    page: int | None = None


class CheckedSentence(BaseModel):
    text: str
    verdict: str = Field(description="supported, contradicted or unsupported")
    findings: list[str] = Field(description="why, in plain words")
    evidence: list[Evidence]


class Verification(BaseModel):
    index: str
    supported: bool = Field(description="every sentence is supported")
    sentences: list[CheckedSentence]


#: What FastMCP passes the tools that declare it (it finds the parameter by this annotation); the session,
#: lifespan and request types are FastMCP's own and unused here.
ToolContext = Context[Any, Any, Any]
CredentialOf = Callable[[ToolContext], str]


def build_server(rag_url: str, gateway_url: str, credential: CredentialOf, **settings: Any) -> FastMCP:
    """The FastMCP app; `credential(ctx)` is the token a call runs with; `settings` go to FastMCP (HTTP)."""
    mcp = FastMCP("docent", instructions=INSTRUCTIONS, **settings)

    async def call(ctx: ToolContext, work: Callable[[Docent], Any]) -> Any:
        docent = Docent(rag_url, gateway_url, credential(ctx))
        try:
            return await anyio.to_thread.run_sync(work, docent)
        except DocentError as exc:
            raise ToolError(str(exc)) from exc

    @mcp.tool(description="The document indexes you may search, with their names, ids and sizes.")
    async def list_indexes(ctx: ToolContext) -> IndexList:
        found = await call(ctx, lambda d: d.list_indexes())
        return IndexList(indexes=[IndexInfo(**i) for i in found])

    @mcp.tool(description="Search one index for passages relevant to a query, best first; each passage "
                          "names its document, pages and chunk id.")
    async def search(ctx: ToolContext, query: Annotated[str, Field(min_length=1, max_length=8000)],
                     index: Annotated[str, Field(min_length=1, description="an index name or id")],
                     k: Annotated[int, Field(ge=1, le=MAX_K, description="passages to return")] = 8,
                     ) -> Annotated[CallToolResult, SearchResult]:
        found = await call(ctx, lambda d: d.search(query, index, k))
        result = SearchResult(index=str(found.get("index") or index), query=query, passages=[
            Passage(document=r["document_name"], page_start=r["page_start"], page_end=r["page_end"],
                    chunk_id=r["chunk_id"], score=float(r["score"]), text=r["text"])
            for r in found.get("results", [])[:k]])
        return CallToolResult(content=[TextContent(type="text", text=_passages_text(result))],
                              structuredContent=result.model_dump(mode="json"))

    @mcp.tool(description="Answer a question from one index. Every sentence cites [n] a passage whose pages are "
                          "listed; citations are checked, and a question the documents do not cover is refused.")
    async def ask(ctx: ToolContext, question: Annotated[str, Field(min_length=1, max_length=8000)],
                  index: Annotated[str, Field(min_length=1, description="an index name or id")],
                  ) -> Annotated[CallToolResult, Answer]:
        found = await call(ctx, lambda d: d.ask(question, index))
        answer = Answer(question=question, index=index, answer=str(found.get("answer") or ""),
                        answer_source=str(found.get("answer_source") or ""), citations=[
                            Citation(n=c["n"], document=c["document_name"], page_start=c["page_start"],
                                     page_end=c["page_end"], chunk_id=c["chunk_id"], quote=c.get("quote") or "")
                            for c in found.get("citations", [])])
        return CallToolResult(content=[TextContent(type="text", text=_answer_text(answer))],
                              structuredContent=answer.model_dump(mode="json"))

    @mcp.tool(description="Check any text (a draft, a memo, another assistant's answer) against one index: each "
                          "sentence is marked supported, contradicted or unsupported by what the documents say, "
                          "with the reasons in plain words and the evidence (document, page).")
    async def verify(ctx: ToolContext, text: Annotated[str, Field(min_length=1, max_length=20000)],
                     index: Annotated[str, Field(min_length=1, description="an index name or id")],
                     question: Annotated[str, Field(max_length=8000, description="what the text answers")] = "",
                     ) -> Annotated[CallToolResult, Verification]:
        found = await call(ctx, lambda d: d.verify(text, index, question))
        result = Verification(index=index, supported=bool(found.get("supported")), sentences=[
            CheckedSentence(text=s["text"], verdict=s["verdict"], findings=list(s.get("findings") or []),
                            evidence=[Evidence(n=e["n"], quote=e.get("quote") or "", document=e.get("document") or "",
                                               page=e.get("page")) for e in s.get("evidence") or []])
            for s in found.get("sentences", [])])
        return CallToolResult(content=[TextContent(type="text", text=_verification_text(result))],
                              structuredContent=result.model_dump(mode="json"))

    return mcp


def _verification_text(result: Verification) -> str:
    marks = {"supported": "✓", "contradicted": "✗", "unsupported": "?"}
    lines = []
    for s in result.sentences:
        lines.append(f"{marks.get(s.verdict, '?')} {s.verdict}: {' '.join(s.text.split())}")
        lines += [f"    {f}" for f in s.findings]
        lines += [f"    [{e.n}] {e.document}{f', p. {e.page}' if e.page else ''}: \"{' '.join(e.quote.split())[:200]}\""
                  for e in s.evidence]
    return "\n".join(lines) or "Nothing to check."


def _pages(start: int, end: int) -> str:
    return f"p. {start}" if start == end else f"pp. {start}-{end}"


def _passages_text(result: SearchResult) -> str:
    if not result.passages:
        return f"No passages in {result.index} match {result.query!r}."
    lines = [f"{n}. {p.document}, {_pages(p.page_start, p.page_end)} (chunk {p.chunk_id}, score {p.score:.3f})\n"
             f"   {' '.join(p.text.split())}" for n, p in enumerate(result.passages, start=1)]
    return "\n".join(lines)


def _answer_text(answer: Answer) -> str:
    if not answer.citations:
        return answer.answer
    sources = "\n".join(f"[{c.n}] {c.document}, {_pages(c.page_start, c.page_end)} (chunk {c.chunk_id})"
                        for c in answer.citations)
    return f"{answer.answer}\n\nSources:\n{sources}"

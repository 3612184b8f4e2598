"""Chunk a file that holds several documents (a mailbox) as one set of chunks per document.

Why not one document with a page per message: context expansion joins a chunk to its neighbours by
`chunk_index` within a document, so the last chunk of one message would be read together with the
first of the next, a reply from someone else; and a filter or task naming the message could not
tell it from the rest of the mailbox. Each part is chunked alone (its `chunk_index` counts from 0)
under its own document id, while the file stays one manifest entry, written and replaced in one
commit (`rag_system/indexing/builder.py`).
"""

from __future__ import annotations

from dataclasses import replace

from common.document_ids import part_id
from rag_system.chunking.chunk import Chunk
from rag_system.chunking.chunker import ChunkerOptions, TokenCounter, chunk_document
from rag_system.ingestion.types import Block, ConvertedDocument


def chunk_file(doc: ConvertedDocument, file_id: str, count_tokens: TokenCounter,
               options: ChunkerOptions) -> tuple[list[Chunk], list[str]]:
    """The file's chunks and, per chunk, the id of the document it belongs to."""
    if not doc.pages_are_documents:
        whole = chunk_document(doc, file_id, count_tokens, options)
        return whole, [file_id] * len(whole)
    by_page: dict[int, list[Block]] = {}
    for block in doc.blocks:
        by_page.setdefault(block.page, []).append(block)
    chunks: list[Chunk] = []
    ids: list[str] = []
    for page, blocks in sorted(by_page.items()):
        document_id = part_id(file_id, page)
        part = chunk_document(replace(doc, blocks=tuple(blocks)), document_id, count_tokens, options)
        chunks.extend(part)
        ids.extend([document_id] * len(part))
    return chunks, ids

"""Blocks -> chunks under a token budget, one section at a time.

Why these rules: a chunk is both the unit of retrieval and the unit a citation
points at, so it must (1) fit the embedder's window, measured with its own
tokenizer, (2) stay inside one section so its heading path is true, (3) keep a
table or code listing whole, because half a table answers nothing, and (4)
know exactly which pages it spans. Consecutive prose chunks share one sentence
so an answer that straddles a boundary is still retrievable from one chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from rag_system.chunking.chunk import Chunk, chunk_id_for, with_windows
from rag_system.chunking.cohesion import best_break, gap_cohesion
from rag_system.chunking.locations import Lines, block_lines, location_metadata, sentence_lines
from rag_system.chunking.sentences import split_sentences
from rag_system.chunking.table_rows import row_metadata, split_rows
from rag_system.ingestion.types import Block, ConvertedDocument, TableRows

TokenCounter = Callable[[list[str]], list[int]]

#: Part of every chunk's version (`ChunkOptions.version`): v2 cuts sentences with the native splitter
#: (`chunking.sentences`), so files chunked by v1's own rules are chunked again on their next build.
CHUNKER_NAME = "sections-v2"
_ATOMIC = frozenset({"table", "code"})
#: With `topic_breaks`, a chunk ends no earlier than this share of its budget.
TOPIC_MIN_FILL = 0.5


@dataclass(frozen=True)
class ChunkerOptions:
    max_tokens: int = 512
    overlap_sentences: int = 1
    # What each chunk's text opens with, so a chunk deep in a section still
    # says what it is about: nothing, its heading path, or the document name
    # and its heading path.
    context: str = "none"
    # Vector windows: each chunk is also cut into pieces of at most this many
    # tokens (0 = off), each opening with the chunk's context line. The
    # vector leg scores a chunk by its best window, so one answer among
    # several in a chunk is not averaged away (MiniLM was trained at 256).
    window_tokens: int = 0
    # Start a new chunk at a paragraph when the whole paragraph does not fit
    # in what is left of the current one but fits in an empty one.
    align_blocks: bool = False
    # Pack code blocks with the prose around them (still never split one that
    # fits): "results like this:" + listing + explanation stay one passage.
    pack_code: bool = False
    # Also open a window at every paragraph (see `_windows`).
    window_at_blocks: bool = False
    # End a full chunk (and window) at the paragraph start in its back half
    # where the vocabulary changes most (`rag_system.chunking.cohesion`).
    topic_breaks: bool = False
    # Also open a window at every paragraph whose cohesion with what precedes
    # it is below this (0 = off): `window_at_blocks` for likely topic starts only.
    window_at_topics: float = 0.0

    @property
    def version(self) -> str:
        """Changes whenever chunk text (or its windows) could change, so builds redo files."""
        base = f"{CHUNKER_NAME}-t{self.max_tokens}-o{self.overlap_sentences}-c{self.context}"
        if self.window_tokens:
            base += f"-w{self.window_tokens}"
        if self.align_blocks:
            base += "-a"
        if self.pack_code:
            base += "-pc"
        if self.window_at_blocks:
            base += "-wb"
        if self.topic_breaks:
            base += "-tb"
        if self.window_at_topics:
            base += f"-wt{self.window_at_topics:g}v"
        return base


@dataclass(frozen=True)
class Section:
    """One section's content, ready to pack: its units and the context line its chunks open with."""

    path: tuple[str, ...]
    prefix: str
    prefix_tokens: int
    units: list[_Unit]


@dataclass(frozen=True)
class _Unit:
    """A sentence, or a whole table/code block, with its page and size."""

    text: str
    page: int
    block_type: str
    tokens: int
    starts_block: bool
    # Lexical cohesion across the gap before this unit when it opens a paragraph.
    cohesion: float | None = None
    lines: Lines = None  # its first and last line in the source file, when the format has lines
    # The rows of a sheet/CSV table this unit holds (its text renders them under the header).
    table: TableRows | None = None


def chunk_document(doc: ConvertedDocument, document_id: str, count_tokens: TokenCounter,
                   options: ChunkerOptions) -> list[Chunk]:
    """Chunk one converted document; ordinals follow document order."""
    sections = [s for s in (_section(doc.name, path, blocks, count_tokens, options)
                            for path, blocks in _sections(doc.blocks)) if s is not None]
    pieces: list[tuple[tuple[str, ...], str, int, list[_Unit], tuple[tuple[str, ...], int]]] = []
    for sec in sections:
        budget = replace(options, max_tokens=options.max_tokens - sec.prefix_tokens)
        for units in _pack(sec.units, budget):
            windows = _windows(units, sec.prefix, sec.prefix_tokens, options, count_tokens) \
                if options.window_tokens else ((), 0)
            pieces.append((sec.path, sec.prefix, sec.prefix_tokens, units, windows))
    return [with_windows(_make_chunk(doc, document_id, options.version, ordinal, path, units, prefix, prefix_tokens),
                          prefix, *windows)
            for ordinal, (path, prefix, prefix_tokens, units, windows) in enumerate(pieces)]


def _section(name: str, heading_path: tuple[str, ...], blocks: list[Block], count_tokens: TokenCounter,
             options: ChunkerOptions) -> Section | None:
    prefix = _context_line(name, heading_path, options.context)
    prefix_tokens = count_tokens([prefix])[0] + 1 if prefix else 0
    if prefix and options.max_tokens - prefix_tokens < 32:
        prefix, prefix_tokens = "", 0  # a huge heading path would crowd out the content
    if prefix and blocks and blocks[0].block_type == "heading":
        blocks = blocks[1:]  # the context line already says it
        if not blocks:
            return None
    units = _units(blocks, count_tokens, options.max_tokens - prefix_tokens)
    if options.topic_breaks or options.window_at_topics:
        values = gap_cohesion([u.text for u in units], [u.starts_block for u in units])
        units = [replace(u, cohesion=v) for u, v in zip(units, values)]
    return Section(heading_path, prefix, prefix_tokens, units)


def _windows(units: Sequence[_Unit], prefix: str, prefix_tokens: int, options: ChunkerOptions,
             count_tokens: TokenCounter) -> tuple[tuple[str, ...], int]:
    """The chunk's windows (its units packed to `window_tokens`, block-aligned) and how
    many of them, at the end, are for the vector leg only.

    A chunk that already fits in one window gets one window, its own text. A
    long context line may not squeeze the content below half a window. With
    `window_at_blocks`, every paragraph also opens a window of its own (an
    answer that starts mid-window is otherwise embedded with the end of
    whatever came before it); with `window_at_topics`, only a paragraph whose
    cohesion with what precedes it is that low does, and those extra windows
    are embedded but not added to the full-text table (BM25 gains nothing
    from overlapping copies of text it already scores).
    """
    budget = max(options.window_tokens // 2, options.window_tokens - prefix_tokens)
    if sum(u.tokens for u in units) <= budget:
        return (_join(units, prefix),), 0
    if len(units) == 1 and units[0].table is not None:
        # A table's windows are its rows in smaller pieces, each under the header again.
        pieces = split_rows(units[0].table, count_tokens, budget)
        return tuple(_join([_Unit(text, units[0].page, "table", tokens, True)], prefix)
                     for _, text, tokens in pieces), 0
    window_options = ChunkerOptions(max_tokens=budget, overlap_sentences=0, align_blocks=True,
                                    pack_code=options.pack_code, topic_breaks=options.topic_breaks)
    groups = _pack(units, window_options)
    starts = {id(group[0]) for group in groups}
    opens = [i for i, unit in enumerate(units)
             if unit.starts_block and id(unit) not in starts and unit.block_type not in _ATOMIC]
    if options.window_at_blocks:
        groups.extend(_fill(units[i:], budget) for i in opens)
        order = {id(u): i for i, u in enumerate(units)}
        groups.sort(key=lambda g: order[id(g[0])])
        return tuple(_join(group, prefix) for group in groups), 0
    cutoff = options.window_at_topics
    extra = [_fill(units[i:], budget) for i in opens
             if cutoff and (cohesion := units[i].cohesion) is not None and cohesion < cutoff]
    return tuple(_join(group, prefix) for group in groups + extra), len(extra)


def _fill(units: Sequence[_Unit], budget: int) -> list[_Unit]:
    """Whole units from the first on, while they fit the budget (the first always)."""
    group: list[_Unit] = []
    size = 0
    for unit in units:
        if group and size + unit.tokens > budget:
            break
        group.append(unit)
        size += unit.tokens
    return group


def _context_line(name: str, heading_path: tuple[str, ...], mode: str) -> str:
    parts = list(heading_path) if mode in ("headings", "document") else []
    if mode == "document":
        parts.insert(0, name)
    return " > ".join(parts)


def _sections(blocks: Iterable[Block]) -> Iterable[tuple[tuple[str, ...], list[Block]]]:
    """Group consecutive blocks by heading path; a heading opens a section."""
    current: list[Block] = []
    path: tuple[str, ...] | None = None
    for block in blocks:
        if not block.text.strip():
            continue
        if current and (block.block_type == "heading" or block.heading_path != path):
            yield path or (), current
            current = []
        path = block.heading_path
        current.append(block)
    if current:
        yield path or (), current


def _units(blocks: list[Block], count_tokens: TokenCounter, max_tokens: int) -> list[_Unit]:
    raw: list[tuple[str, int, str, bool, Lines]] = []
    tables: list[list[_Unit]] = []  # each sheet/CSV table's pieces, in order
    for block in blocks:
        if block.table is not None:
            tables.append([_Unit(text, block.page, "table", tokens, True, table=rows)
                           for rows, text, tokens in split_rows(block.table, count_tokens, max_tokens)])
            raw.append(("", block.page, "table", True, None))  # its place in the order; replaced below
            continue
        if block.block_type in _ATOMIC or block.block_type == "heading":
            text = block.text.strip()
            raw.append((text, block.page, block.block_type, True, block_lines(block, text)))
            continue
        sentences = split_sentences(block.text)
        for i, (sentence, lines) in enumerate(zip(sentences, sentence_lines(block, sentences))):
            raw.append((sentence, block.page, block.block_type, i == 0, lines))
    counts = count_tokens([text for text, *_ in raw])
    units: list[_Unit] = []
    pending_tables = iter(tables)
    for (text, page, kind, first, lines), tokens in zip(raw, counts):
        if not text and kind == "table":
            for unit in next(pending_tables):
                units.extend([unit] if unit.tokens <= max_tokens else
                             _split_oversized(unit.text, unit.page, "table", count_tokens, max_tokens))
        elif tokens <= max_tokens:
            units.append(_Unit(text, page, kind, tokens, first, lines=lines))
        else:
            units.extend(replace(u, lines=lines) for u in _split_oversized(text, page, kind, count_tokens, max_tokens))
    return units


def _split_oversized(text: str, page: int, kind: str, count_tokens: TokenCounter,
                     max_tokens: int) -> list[_Unit]:
    """Split a unit larger than the budget: by lines for tables/code, else by words."""
    sep = "\n" if kind in _ATOMIC and "\n" in text else " "
    parts = text.split(sep)
    counts = count_tokens(parts)
    out: list[_Unit] = []
    buf: list[str] = []
    size = 0
    for part, tokens in zip(parts, counts):
        if buf and size + tokens + 1 > max_tokens:
            out.append(_Unit(sep.join(buf), page, kind, size, not out))
            buf, size = [], 0
        if tokens > max_tokens:  # one enormous "word": cut by characters
            step = max(1, len(part) * max_tokens // (tokens + 1))
            for i in range(0, len(part), step):
                out.append(_Unit(part[i:i + step], page, kind, max_tokens, not out))
            continue
        buf.append(part)
        size += tokens + (1 if len(buf) > 1 else 0)
    if buf:
        out.append(_Unit(sep.join(buf), page, kind, size, not out))
    return out


def _pack(units: Sequence[_Unit], options: ChunkerOptions) -> list[list[_Unit]]:
    """Greedy packing with sentence overlap; tables (and code unless `pack_code`) get their own chunks."""
    groups: list[list[_Unit]] = []
    current: list[_Unit] = []
    size = 0
    fresh = 0  # units in `current` that are not overlap carried from the previous chunk

    def flush(carry: bool) -> None:
        nonlocal current, size, fresh
        if fresh:
            groups.append(current)
        tail: list[_Unit] = []
        if carry and fresh and options.overlap_sentences:
            tail = [u for u in current[-options.overlap_sentences:] if u.block_type not in _ATOMIC]
            if len(tail) >= len(current):
                tail = []
        current, size, fresh = list(tail), sum(u.tokens for u in tail), 0

    block_sizes = _block_sizes(units) if options.align_blocks else [0] * len(units)
    alone = _ATOMIC - {"code"} if options.pack_code else _ATOMIC
    for unit, block_size in zip(units, block_sizes):
        if unit.block_type in alone:
            flush(carry=False)
            groups.append([unit])
            continue
        whole = unit.starts_block and block_size <= options.max_tokens
        incoming = block_size if options.align_blocks and whole else unit.tokens
        if options.topic_breaks and fresh and size + incoming > options.max_tokens:
            cut = best_break([u.cohesion for u in current] + [unit.cohesion], [u.tokens for u in current],
                             earliest=len(current) - fresh + 1, min_tokens=int(options.max_tokens * TOPIC_MIN_FILL),
                             room=options.max_tokens - incoming)
            if cut is not None:
                groups.append(current[:cut])
                current = current[cut:]
                size, fresh = sum(u.tokens for u in current), len(current)
        if fresh and whole and size + block_size > options.max_tokens:
            flush(carry=False)  # the paragraph fits whole in a fresh chunk: start one
        if fresh and size + unit.tokens > options.max_tokens:
            flush(carry=True)
            while current and size + unit.tokens > options.max_tokens:
                size -= current.pop(0).tokens
        current.append(unit)
        size += unit.tokens
        fresh += 1
    flush(carry=False)
    return groups


def _block_sizes(units: Sequence[_Unit]) -> list[int]:
    """For a unit that starts a block, the tokens of that whole block (else 0)."""
    sizes = [0] * len(units)
    start = 0
    for i, unit in enumerate(units):
        if unit.starts_block:
            start = i
        sizes[start] += unit.tokens
    return [size if unit.starts_block else 0 for size, unit in zip(sizes, units)]


def _join(units: Sequence[_Unit], prefix: str = "") -> str:
    """Units as text: a block starts a new line, sentences of one block share a line."""
    parts: list[str] = [prefix, "\n"] if prefix else []
    for i, unit in enumerate(units):
        if i and unit.starts_block:
            parts.append("\n")
        elif i:
            parts.append(" ")
        parts.append(unit.text)
    return "".join(parts)


def _make_chunk(doc: ConvertedDocument, document_id: str, version: str, ordinal: int,
                heading_path: tuple[str, ...], units: list[_Unit], prefix: str = "",
                prefix_tokens: int = 0) -> Chunk:
    kinds = [u.block_type for u in units if u.block_type != "heading"] or ["paragraph"]
    block_type = max(set(kinds), key=lambda k: (sum(u.tokens for u in units if u.block_type == k), k))
    pages = sorted({u.page for u in units})
    text = _join(units, prefix)
    metadata: dict[str, object] = {
        "file_type": doc.file_type,
        "source_path": doc.source_path,
        "pages": pages,
        **location_metadata(text, [(u.text, u.page, u.lines) for u in units], doc.file_type, doc.page_count),
    }
    if any(u.block_type == "ocr" for u in units):
        metadata["ocr_engine"] = doc.ocr_engine
    tables = [u.table for u in units if u.table is not None]
    if len(tables) == 1:
        metadata.update(row_metadata(tables[0]))
    return Chunk(
        chunk_id=chunk_id_for(document_id, version, ordinal),
        chunk_index=ordinal,
        text=text,
        page_start=pages[0],
        page_end=pages[-1],
        heading_path=" > ".join(heading_path),
        block_type=block_type,
        token_count=prefix_tokens + sum(u.tokens for u in units),
        metadata=metadata,
    )

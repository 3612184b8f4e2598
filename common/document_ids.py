"""What a `document_id` is, for both services: a file's sha256, or one part of a file.

Most files are one document, whose id is the sha256 of the file's bytes: the gateway stores an
upload under that hash and serves its pages and file by it. A mailbox is many documents (each
message is one: its chunks never join another message's in context expansion, and a document
filter or task can name it), yet one file on disk. Its messages are `<file sha256>-<n>`, message
n counted from 1, so whoever holds a citation can still find the file it came from without a
lookup table: the gateway opens the mailbox for `<sha>-3` as it does for `<sha>`.
"""

from __future__ import annotations

import re

#: Between a file's id and a part number; neither hex digits nor a SQL LIKE wildcard.
PART_SEPARATOR = "-"
_FILE_ID = "[0-9a-f]{64}"  # a sha256: the only ids that may have parts
_PART_ID = re.compile(rf"^({_FILE_ID})-([1-9][0-9]*)$")
_WHOLE_FILE = re.compile(rf"^{_FILE_ID}$")


def may_have_parts(document_id: str) -> bool:
    """Whether `document_id` is a file's id (a sha256), whose parts are `<id>-<n>`."""
    return _WHOLE_FILE.match(document_id) is not None


def part_id(file_id: str, part: int) -> str:
    """The document id of part `part` (1-based) of the file whose id is `file_id`."""
    if part < 1:
        raise ValueError(f"part numbers start at 1, got {part}")
    return f"{file_id}{PART_SEPARATOR}{part}"


def file_id(document_id: str) -> str:
    """The id of the file a document comes from: itself for a whole file, the prefix for a part."""
    found = _PART_ID.match(document_id)
    return found.group(1) if found else document_id


def part_number(document_id: str) -> int:
    """Which part of its file a document is: 0 for a whole file."""
    found = _PART_ID.match(document_id)
    return int(found.group(2)) if found else 0

"""SQLite schema, versioned with `PRAGMA user_version`.

Each entry of `MIGRATIONS` moves the schema from version i to i+1 and runs in
one transaction; a database at version n gets exactly the entries after n.
Never edit a released migration: append a new one.
"""

from __future__ import annotations

import sqlite3

MIGRATIONS: tuple[str, ...] = (
    # 1: sessions, messages, indexes, documents, links, build jobs.
    """
    CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        title       TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        model_used  TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE messages (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq         INTEGER NOT NULL,
        turn_id     TEXT NOT NULL,
        sender      TEXT NOT NULL CHECK (sender IN ('user', 'assistant')),
        content     TEXT NOT NULL,
        timestamp   TEXT NOT NULL,
        metadata    TEXT NOT NULL DEFAULT '{}',
        UNIQUE (turn_id, sender),
        UNIQUE (session_id, seq)
    );
    CREATE TABLE indexes (
        id                 TEXT PRIMARY KEY,
        name               TEXT NOT NULL,
        description        TEXT NOT NULL DEFAULT '',
        created_at         TEXT NOT NULL,
        updated_at         TEXT NOT NULL,
        vector_table_name  TEXT NOT NULL,
        metadata           TEXT NOT NULL DEFAULT '{}',
        session_id         TEXT REFERENCES sessions(id) ON DELETE SET NULL
    );
    CREATE TABLE index_documents (
        id          TEXT PRIMARY KEY,
        index_id    TEXT REFERENCES indexes(id) ON DELETE CASCADE,
        session_id  TEXT REFERENCES sessions(id) ON DELETE SET NULL,
        filename    TEXT NOT NULL,
        stored_path TEXT NOT NULL,
        sha256      TEXT NOT NULL,
        size        INTEGER NOT NULL,
        status      TEXT NOT NULL DEFAULT 'uploaded',
        created_at  TEXT NOT NULL
    );
    CREATE TABLE session_indexes (
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        index_id    TEXT NOT NULL REFERENCES indexes(id) ON DELETE CASCADE,
        linked_at   TEXT NOT NULL,
        PRIMARY KEY (session_id, index_id)
    );
    CREATE TABLE index_jobs (
        job_id      TEXT PRIMARY KEY,
        index_id    TEXT NOT NULL REFERENCES indexes(id) ON DELETE CASCADE,
        state       TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
    );
    CREATE INDEX messages_by_session ON messages(session_id, seq);
    CREATE INDEX documents_by_index ON index_documents(index_id);
    CREATE INDEX documents_by_session ON index_documents(session_id);
    CREATE INDEX documents_by_sha ON index_documents(sha256);
    CREATE INDEX sessions_by_update ON sessions(updated_at);
    """,
    # 2: each document's page count and the reason its last build failed (the index manager lists both).
    """
    ALTER TABLE index_documents ADD COLUMN page_count INTEGER;
    ALTER TABLE index_documents ADD COLUMN error TEXT;
    """,
    # 3: accounts (Documentation/security.md): users, their login sessions and API tokens, failed-login
    # counters, owners and share lists of sessions and indexes, and the hash-chained audit log.
    # Rows made before accounts existed keep a NULL owner: only an admin sees them.
    """
    CREATE TABLE users (
        id             TEXT PRIMARY KEY,
        username       TEXT NOT NULL UNIQUE COLLATE NOCASE,
        role           TEXT NOT NULL CHECK (role IN ('admin', 'editor', 'viewer')),
        password_hash  TEXT NOT NULL,
        disabled       INTEGER NOT NULL DEFAULT 0,
        created_at     TEXT NOT NULL,
        last_login_at  TEXT
    );
    CREATE TABLE auth_sessions (
        id_hash     TEXT PRIMARY KEY,
        user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        csrf_token  TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        expires_at  TEXT NOT NULL,
        address     TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE api_tokens (
        id            TEXT PRIMARY KEY,
        user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name          TEXT NOT NULL,
        token_hash    TEXT NOT NULL UNIQUE,
        created_at    TEXT NOT NULL,
        last_used_at  TEXT
    );
    CREATE TABLE login_failures (
        subject       TEXT PRIMARY KEY,
        failures      INTEGER NOT NULL,
        last_at       REAL NOT NULL,
        locked_until  REAL NOT NULL DEFAULT 0
    );
    ALTER TABLE sessions ADD COLUMN owner_id TEXT REFERENCES users(id) ON DELETE SET NULL;
    ALTER TABLE indexes ADD COLUMN owner_id TEXT REFERENCES users(id) ON DELETE SET NULL;
    CREATE TABLE index_shares (
        index_id    TEXT NOT NULL REFERENCES indexes(id) ON DELETE CASCADE,
        grantee     TEXT NOT NULL,
        access      TEXT NOT NULL CHECK (access IN ('read', 'write')),
        created_at  TEXT NOT NULL,
        PRIMARY KEY (index_id, grantee)
    );
    CREATE TABLE audit_log (
        seq        INTEGER PRIMARY KEY,
        at         TEXT NOT NULL,
        actor      TEXT NOT NULL,
        action     TEXT NOT NULL,
        target     TEXT NOT NULL DEFAULT '',
        address    TEXT NOT NULL DEFAULT '',
        detail     TEXT NOT NULL DEFAULT '{}',
        prev_hash  TEXT NOT NULL,
        hash       TEXT NOT NULL
    );
    CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    CREATE INDEX sessions_by_owner ON sessions(owner_id);
    CREATE INDEX indexes_by_owner ON indexes(owner_id);
    CREATE INDEX shares_by_grantee ON index_shares(grantee);
    CREATE INDEX tokens_by_user ON api_tokens(user_id);
    """,
    # 4: revocation epochs for RAG API grants (a user's, or '*' for everyone: rag_system/api/grant_epochs.py)
    # and the audit log's head anchor (the newest row's seq and hash, HMAC'd: backend/audit_head.py).
    """
    CREATE TABLE grant_epochs (
        subject TEXT PRIMARY KEY,
        epoch INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE audit_head (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        seq INTEGER NOT NULL,
        hash TEXT NOT NULL,
        mac TEXT NOT NULL
    );
    """,
    # 5: ratings of answers (Documentation/api-gateway.md#feedback): one per person and answer, changeable;
    # `turn` is the rated turn as it was (question, answer, citations, answer_source, indexes, options),
    # so an export reads the same whatever happens to the index afterwards. `rater` is the user id,
    # or '' in single-user mode. A deleted conversation takes its ratings with it.
    """
    CREATE TABLE feedback (
        message_id  TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        rater       TEXT NOT NULL,
        rating      TEXT NOT NULL CHECK (rating IN ('up', 'down')),
        comment     TEXT NOT NULL DEFAULT '',
        turn        TEXT NOT NULL DEFAULT '{}',
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        PRIMARY KEY (message_id, rater)
    );
    CREATE INDEX feedback_by_update ON feedback(updated_at);
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNewError(RuntimeError):
    """The database was written by a newer gateway; refuse rather than guess."""


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection) -> int:
    """Bring `conn`'s database to `SCHEMA_VERSION`; returns the number of steps applied.

    The connection must be in autocommit mode (`isolation_level=None`). Each
    step and its `user_version` bump commit together, so a crash leaves the
    database at a whole version.
    """
    current = schema_version(conn)
    if current > SCHEMA_VERSION:
        raise SchemaTooNewError(f"database schema version {current} is newer than this gateway's "
                                f"({SCHEMA_VERSION}); upgrade the gateway")
    applied = 0
    for version in range(current, SCHEMA_VERSION):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-check inside the write lock: another process may have migrated meanwhile.
            if schema_version(conn) != version:
                conn.execute("ROLLBACK")
                continue
            for statement in _statements(MIGRATIONS[version]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
            applied += 1
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return applied


def _statements(script: str) -> list[str]:
    """Split a migration into statements (executescript would commit on its own)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        raise ValueError(f"incomplete SQL statement in migration: {buf.strip()[:80]}")
    return out

"""The results store: one embedded SQLite database for runs, environments and results.

WAL journaling lets any number of readers proceed while one writer commits; writers
take the lock up front (``BEGIN IMMEDIATE``) and wait up to ``busy_timeout`` for each
other instead of failing.  The schema is versioned with ``PRAGMA user_version`` and
upgraded by the ordered migrations below, so a newer fsbm opens an older store.

A document's body is its JSON.  Above COMPRESS_ABOVE bytes it is kept compressed (an LZ4
frame: a prediction of four candidates goes from 77 KB to 22 KB for 0.05 ms of CPU), since
under a stream of distinct predictions the bytes each commit writes, to the WAL and again to
the database, are what hold writers back.  zstd keeps it in 12 KB, but costs 0.11 ms, and
served 5% fewer distinct predictions a second.  Such a body is a BLOB: COMPRESSED, the JSON's
length (8 bytes, little-endian), an LZ4 frame.  A body of JSON
text is read as before, so stores written before version 3 need no rewriting.
"""

from __future__ import annotations

import functools
import hashlib
import json
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from fsbm.errors import FsbmError
from fsbm.locations import default_store_path

SCHEMA_VERSION = 3
COMPRESSED = b"fsbm-lz4"  # the head of a compressed body (a JSON text never starts so)
COMPRESS_ABOVE = 4096  # bytes of JSON; smaller bodies are kept as they are
WRITE_LOCK_PAUSES_S = (50e-6, 1e-3)  # the first and the longest pause between tries for the write lock
CHECKPOINT_EVERY_S = 0.2  # how often a Checkpointer moves the WAL's pages into the database
RESTART_WAL_ABOVE = 4096  # frames (pages): a WAL this long is started over (16 MiB of 4 KiB pages)

# What `fsbm store list` calls each kind of stored document, and the kind it is stored as.
DOCUMENT_KINDS = {
    "tables": "cost_table", "profiles": "profile", "predictions": "prediction", "models": "runtime_model",
    "validations": "validation", "replays": "replay", "agings": "aging", "probes": "probe",
    "calibrations": "tracing_calibration", "capture-calibrations": "capture_calibration",
}
# The kinds of run the store records (one per fsbench measurement).
RUN_KINDS = ("fsbench",)
# The format of `fsbm store export`: one document, its kind and name, as another store keeps it.
EXPORT_FORMAT = "fsbm-document"
EXPORT_VERSION = 1

_MIGRATIONS: list[str] = [
    # 1: runs, the environments they ran in, per-case measurements, whole documents.
    """
    CREATE TABLE environments (
        id INTEGER PRIMARY KEY,
        fingerprint TEXT NOT NULL UNIQUE,
        body TEXT NOT NULL
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        label TEXT,
        status TEXT NOT NULL,
        started TEXT NOT NULL,
        finished TEXT,
        environment_id INTEGER REFERENCES environments(id),
        config TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX runs_by_kind ON runs(kind, started);
    CREATE TABLE measurements (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        bench TEXT NOT NULL,
        op TEXT NOT NULL,
        size INTEGER,
        pattern TEXT NOT NULL,
        cache TEXT NOT NULL,
        p50_ns INTEGER,
        mean_ns REAL,
        body TEXT NOT NULL
    );
    CREATE INDEX measurements_by_run ON measurements(run_id, op);
    CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        run_id INTEGER REFERENCES runs(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        name TEXT,
        created TEXT NOT NULL,
        body TEXT NOT NULL
    );
    CREATE INDEX documents_by_kind ON documents(kind, name);
    """,
    # 2: background jobs of the HTTP API (a trace upload turned into a profile).
    """
    CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        progress REAL NOT NULL DEFAULT 0,
        message TEXT NOT NULL DEFAULT '',
        created TEXT NOT NULL,
        updated TEXT NOT NULL,
        input TEXT NOT NULL DEFAULT '{}',
        result TEXT
    );
    """,
    # 3: bodies above COMPRESS_ABOVE kept compressed; the JSON's size, which listings show, kept
    # beside them (NULL for a body kept as text, whose LENGTH it is).
    """
    ALTER TABLE documents ADD COLUMN json_bytes INTEGER
    """,
]


@functools.cache
def _codec() -> Any:
    import pyarrow  # not at import: commands that never touch a large body start faster

    return pyarrow.Codec("lz4")


def _kept(body: str) -> tuple[str | bytes, int | None]:
    """A document's JSON as the store keeps it, and its size where that is not the body's length."""
    encoded = body.encode()
    if len(encoded) <= COMPRESS_ABOVE:
        return body, None
    return COMPRESSED + len(encoded).to_bytes(8, "little") + _codec().compress(encoded, asbytes=True), len(encoded)


def _loaded(body: str | bytes) -> Any:
    """A kept body (_kept) as the JSON document it holds."""
    if isinstance(body, bytes) and body.startswith(COMPRESSED):
        head = len(COMPRESSED)
        size = int.from_bytes(body[head:head + 8], "little")
        body = _codec().decompress(body[head + 8:], decompressed_size=size, asbytes=True)
    return json.loads(body)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def store_path(path: Path | str | None) -> Path:
    """The results store at `path`, or the default one (fsbm.locations) for None."""
    return Path(path) if path is not None else default_store_path()


class Checkpointer:
    """Copies the store's WAL into the database from a thread of its own, every
    CHECKPOINT_EVERY_S, for handles opened with `checkpoints=False`.

    A server saving a prediction per request would otherwise pay for a checkpoint inside a
    request about once in 180 saves: 7-8 ms, during which every request queued on that process
    waits.  SQLite copies the pages without Python's lock, so the requests go on meanwhile.

    Each round is a passive checkpoint, which copies what the WAL holds without waiting for
    anyone.  Under a steady stream of commits it never catches up with the last of them, and
    the WAL starts over only once every frame is copied, so it would grow for as long as the
    stream lasts.  Past RESTART_WAL_ABOVE frames, a restart checkpoint follows: it copies the
    few frames committed meanwhile while holding writers off (a millisecond or so), and the
    next commit starts the WAL over."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = store_path(path)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fsbm store checkpoints", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 100")
        try:
            while True:
                stopping = self._stop.wait(CHECKPOINT_EVERY_S)
                try:
                    _, frames, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    if frames > RESTART_WAL_ABOVE or stopping:
                        conn.execute("PRAGMA wal_checkpoint(RESTART)")
                except sqlite3.Error:  # busy or locked: the next round copies it
                    pass
                if stopping:
                    return
        finally:
            conn.close()

    def stop(self) -> None:
        """One last round, then the thread ends."""
        self._stop.set()
        self._thread.join()


@dataclass(frozen=True)
class JobRecord:
    """One row of ``jobs``: what an API client polls."""

    id: str
    kind: str
    status: str          # queued | running | done | failed
    progress: float      # 0..1
    message: str
    created: str
    updated: str
    input: dict[str, Any]
    result: dict[str, Any] | None


@dataclass(frozen=True)
class RunRecord:
    """One row of ``runs``, as listings show it."""

    id: int
    kind: str
    label: str | None
    status: str
    started: str
    finished: str | None
    measurements: int


@dataclass(frozen=True)
class DocumentRecord:
    """One stored document without its body, as listings show it."""

    id: int
    kind: str
    name: str | None
    created: str
    bytes: int


class ResultsStore:
    """A handle on the SQLite results store.  Cheap to open; one per thread."""

    def __init__(self, path: Path | str | None = None, *, busy_timeout_ms: int = 30000,
                 checkpoints: bool = True) -> None:
        """`checkpoints=False`: commits never copy the WAL into the database themselves (SQLite
        does so after a commit that takes the WAL past 1,000 pages, about 8 ms here); a
        Checkpointer must then run beside the handle, or the WAL grows without end."""
        self.path = store_path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, timeout=busy_timeout_ms / 1000, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise FsbmError(f"cannot open the results store {self.path}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        self._busy_timeout_ms = int(busy_timeout_ms)
        self._conn.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
        self._conn.execute("PRAGMA foreign_keys = ON")
        try:
            mode = self._conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() == "wal":
                # In WAL mode NORMAL keeps the database consistent through a crash and loses at
                # most the last commits on power loss; FULL would fsync every saved prediction.
                self._conn.execute("PRAGMA synchronous = NORMAL")
                if not checkpoints:
                    self._conn.execute("PRAGMA wal_autocheckpoint = 0")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise FsbmError(f"{self.path} is not a usable fsbm results store: {exc}") from exc
        self.journal_mode = str(mode).lower()

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "ResultsStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        current = self.schema_version
        if current > SCHEMA_VERSION:
            raise FsbmError(
                f"{self.path} has schema version {current}, newer than this fsbm understands "
                f"({SCHEMA_VERSION}); upgrade fsbm"
            )
        for version in range(current, SCHEMA_VERSION):
            with self.write() as conn:
                # Re-check inside the write lock: another process may have migrated first.
                if int(conn.execute("PRAGMA user_version").fetchone()[0]) > version:
                    continue
                for statement in _MIGRATIONS[version].split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {version + 1}")

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: the single-writer lock is taken at the start, not at commit."""
        self._begin_immediate()
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        else:
            self._conn.execute("COMMIT")

    def _begin_immediate(self) -> None:
        """Take the write lock, waiting up to the busy timeout for another writer.  The wait is
        done here, in pauses of 50 us doubling to 1 ms, not by SQLite's busy handler, which
        sleeps 1, 2, 5, 10, 15, 20, 25 ms... between tries: two server processes saving
        predictions that take the lock for half a millisecond each would otherwise stall one
        another for milliseconds, and every request queued behind them."""
        deadline = time.monotonic() + self._busy_timeout_ms / 1000
        pause = WRITE_LOCK_PAUSES_S[0]
        self._conn.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    self._conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as exc:
                    if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                        raise
                time.sleep(pause)
                pause = min(2 * pause, WRITE_LOCK_PAUSES_S[1])
        finally:
            self._conn.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")

    # -- environments and runs -------------------------------------------------------

    def environment_id(self, conn: sqlite3.Connection, environment: dict[str, Any]) -> int:
        """The id of this environment, inserting it the first time it is seen."""
        body = json.dumps(environment, sort_keys=True)
        fingerprint = hashlib.sha256(body.encode()).hexdigest()
        conn.execute("INSERT OR IGNORE INTO environments(fingerprint, body) VALUES (?, ?)", (fingerprint, body))
        return int(conn.execute("SELECT id FROM environments WHERE fingerprint = ?", (fingerprint,)).fetchone()[0])

    def start_run(self, kind: str, *, label: str | None = None, config: dict[str, Any] | None = None) -> int:
        with self.write() as conn:
            cur = conn.execute(
                "INSERT INTO runs(kind, label, status, started, config) VALUES (?, ?, 'running', ?, ?)",
                (kind, label, _now(), json.dumps(config or {}, sort_keys=True)),
            )
            return int(cur.lastrowid)

    def finish_run(self, run_id: int, status: str) -> None:
        with self.write() as conn:
            conn.execute("UPDATE runs SET status = ?, finished = ? WHERE id = ?", (status, _now(), run_id))

    def save_fsbench(self, doc: dict[str, Any], *, label: str | None = None) -> int:
        """Store one fsbench document (environment, every case) as a finished run; returns its id."""
        status = "interrupted" if doc.get("interrupted") else ("partial" if doc.get("errors") else "ok")
        with self.write() as conn:
            env_id = self.environment_id(conn, doc.get("environment", {}))
            cur = conn.execute(
                "INSERT INTO runs(kind, label, status, started, finished, environment_id, config) "
                "VALUES ('fsbench', ?, ?, ?, ?, ?, ?)",
                (label, status, doc.get("started", _now()), doc.get("finished", _now()), env_id,
                 json.dumps(doc.get("config", {}), sort_keys=True)),
            )
            run_id = int(cur.lastrowid)
            conn.executemany(
                "INSERT INTO measurements(run_id, bench, op, size, pattern, cache, p50_ns, mean_ns, body) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (run_id, r["bench"], r["op"], r.get("size"), r["order"], r["cache"],
                     r["latency_ns"]["p50"], r["latency_ns"]["mean"], json.dumps(r))
                    for r in doc.get("results", [])
                ],
            )
            conn.execute(
                "INSERT INTO documents(run_id, kind, name, created, body, json_bytes) VALUES (?, 'fsbench', ?, ?, ?, ?)",
                (run_id, label, _now(), *_kept(json.dumps({k: v for k, v in doc.items() if k != "results"}))),
            )
        return run_id

    def save_document(self, kind: str, body: dict[str, Any] | str, *, name: str | None = None,
                      run_id: int | None = None) -> int:
        """Keep a whole JSON document (a cost table, a profile, a prediction); `body` may come
        already encoded (a pydantic model's JSON, which is several times faster than json.dumps)."""
        kept, json_bytes = _kept(body if isinstance(body, str) else json.dumps(body))
        with self.write() as conn:
            cur = conn.execute(
                "INSERT INTO documents(run_id, kind, name, created, body, json_bytes) VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, kind, name, _now(), kept, json_bytes),
            )
            return int(cur.lastrowid)

    def save_named_document(self, kind: str, encode: Callable[[int], str], *,
                            name: str | None = None) -> tuple[int, str]:
        """Keep a document whose body holds its own id (a prediction): `encode(id)` gives the
        body, encoded once, inside the transaction that took the id.  The id and the body."""
        with self.write() as conn:
            # The id SQLite would give the row, taken under the write lock, so the row is written once.
            document_id = int(conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM documents").fetchone()[0])
            body = encode(document_id)
            conn.execute("INSERT INTO documents(id, run_id, kind, name, created, body, json_bytes) "
                         "VALUES (?, NULL, ?, ?, ?, ?, ?)", (document_id, kind, name, _now(), *_kept(body)))
        return document_id, body

    # -- reading ---------------------------------------------------------------------

    def runs(self, kind: str | None = None, limit: int = 50) -> list[RunRecord]:
        query = (
            "SELECT r.id, r.kind, r.label, r.status, r.started, r.finished, "
            "(SELECT COUNT(*) FROM measurements m WHERE m.run_id = r.id) AS n FROM runs r"
        )
        params: tuple[Any, ...] = ()
        if kind:
            query += " WHERE r.kind = ?"
            params = (kind,)
        query += " ORDER BY r.id DESC LIMIT ?"
        rows = self._conn.execute(query, params + (limit,)).fetchall()
        return [RunRecord(r["id"], r["kind"], r["label"], r["status"], r["started"], r["finished"], r["n"])
                for r in rows]

    def measurements(self, run_id: int) -> list[dict[str, Any]]:
        rows = self._conn.execute("SELECT body FROM measurements WHERE run_id = ? ORDER BY id", (run_id,))
        return [json.loads(r["body"]) for r in rows]

    def run_environment(self, run_id: int) -> dict[str, Any] | None:
        row = self._conn.execute(
            "SELECT e.body FROM runs r JOIN environments e ON e.id = r.environment_id WHERE r.id = ?", (run_id,)
        ).fetchone()
        return json.loads(row["body"]) if row else None

    def run_config(self, run_id: int | None) -> dict[str, Any] | None:
        """The options a run was made with (fsbench's, resolved: its repetitions and seconds a
        case as it ran them); None for an unknown run."""
        if run_id is None:
            return None
        row = self._conn.execute("SELECT config FROM runs WHERE id = ?", (run_id,)).fetchone()
        return json.loads(row["config"]) if row else None

    def run_status(self, run_id: int | None) -> str | None:
        """ok, partial (some cases failed) or interrupted; None for an unknown run."""
        if run_id is None:
            return None
        row = self._conn.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
        return row["status"] if row else None

    def documents(self, kind: str, name: str | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        """(id, created, body) of every stored document of a kind, newest first."""
        query = "SELECT id, created, body FROM documents WHERE kind = ?"
        params: tuple[Any, ...] = (kind,)
        if name is not None:
            query += " AND name = ?"
            params += (name,)
        rows = self._conn.execute(query + " ORDER BY id DESC", params).fetchall()
        return [(r["id"], r["created"], _loaded(r["body"])) for r in rows]

    def document(self, document_id: int, kind: str | None = None) -> tuple[str, str, dict[str, Any]] | None:
        """(kind, created, body) of one stored document, or None (also when it is of another kind)."""
        row = self._conn.execute("SELECT kind, created, body FROM documents WHERE id = ?", (document_id,)).fetchone()
        if row is None or (kind is not None and row["kind"] != kind):
            return None
        return row["kind"], row["created"], _loaded(row["body"])

    def newest_document_id(self, kind: str, name: str) -> int | None:
        """The id of the newest document of a kind kept under `name`, or None (by the index on
        kind and name: no other document is read)."""
        row = self._conn.execute("SELECT MAX(id) AS id FROM documents WHERE kind = ? AND name = ?",
                                 (kind, name)).fetchone()
        return row["id"] if row else None

    def newest_document_ids(self, kind: str, names: list[str]) -> dict[str, int]:
        """Of each of `names` that the store holds a document of this kind under, the id of the
        newest (by the index on kind and name)."""
        marks = ", ".join("?" * len(names))
        rows = self._conn.execute(f"SELECT name, MAX(id) AS id FROM documents WHERE kind = ? AND name IN ({marks}) "
                                  "GROUP BY name", (kind, *names))
        return {r["name"]: r["id"] for r in rows}

    def document_names(self, kind: str) -> list[tuple[int, str | None, str]]:
        """(id, name, created) of every document of a kind, newest first, without the bodies."""
        rows = self._conn.execute("SELECT id, name, created FROM documents WHERE kind = ? ORDER BY id DESC", (kind,))
        return [(r["id"], r["name"], r["created"]) for r in rows]

    def document_records(self, kind: str, limit: int = 50, offset: int = 0) -> list[DocumentRecord]:
        """The documents of a kind, newest first, without their bodies (only their size);
        `offset` skips that many of the newest."""
        rows = self._conn.execute("SELECT id, kind, name, created, COALESCE(json_bytes, LENGTH(body)) AS n "
                                  "FROM documents WHERE kind = ? ORDER BY id DESC LIMIT ? OFFSET ?", (kind, limit, offset))
        return [DocumentRecord(r["id"], r["kind"], r["name"], r["created"], r["n"]) for r in rows]

    def export_document(self, document_id: int) -> dict[str, Any] | None:
        """One document as `fsbm store import` reads it, in this or another store; None if unknown."""
        row = self._conn.execute("SELECT kind, name, created, body FROM documents WHERE id = ?",
                                 (document_id,)).fetchone()
        if row is None:
            return None
        return {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "kind": row["kind"], "name": row["name"],
                "created": row["created"], "exported_from": {"host": socket.gethostname(), "id": document_id},
                "body": _loaded(row["body"])}

    # -- jobs --------------------------------------------------------------------------

    def create_job(self, job_id: str, kind: str, job_input: dict[str, Any]) -> JobRecord:
        now = _now()
        with self.write() as conn:
            conn.execute("INSERT INTO jobs(id, kind, status, created, updated, input) VALUES (?, ?, 'queued', ?, ?, ?)",
                         (job_id, kind, now, now, json.dumps(job_input)))
        job = self.job(job_id)
        assert job is not None
        return job

    def update_job(self, job_id: str, *, status: str | None = None, progress: float | None = None,
                   message: str | None = None, result: dict[str, Any] | None = None) -> None:
        sets, params = ["updated = ?"], [_now()]
        for column, value in (("status", status), ("progress", progress), ("message", message)):
            if value is not None:
                sets.append(f"{column} = ?")
                params.append(value)
        if result is not None:
            sets.append("result = ?")
            params.append(json.dumps(result))
        with self.write() as conn:
            conn.execute(f"UPDATE jobs SET {', '.join(sets)} WHERE id = ?", (*params, job_id))

    def job(self, job_id: str) -> JobRecord | None:
        row = self._conn.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            return None
        return JobRecord(row["id"], row["kind"], row["status"], row["progress"], row["message"], row["created"],
                         row["updated"], json.loads(row["input"]), json.loads(row["result"]) if row["result"] else None)

    def unfinished_jobs(self) -> list[JobRecord]:
        ids = [r["id"] for r in self._conn.execute("SELECT id FROM jobs WHERE status IN ('queued', 'running')")]
        return [job for job in map(self.job, ids) if job is not None]

    def counts(self) -> dict[str, int]:
        return {
            table: int(self._conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
            for table in ("runs", "environments", "measurements", "documents", "jobs")
        }

"""The results store: versioned schema, WAL, readers alongside one writer."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from fsbm.errors import FsbmError
from fsbm.store import COMPRESS_ABOVE, SCHEMA_VERSION, Checkpointer, ResultsStore

pytestmark = pytest.mark.cores_shared  # asserts nothing on a time it measures

FSBENCH_DOC = {
    "schema_version": 1, "started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:01:00Z",
    "config": {"quick": True}, "environment": {"fs_type": "ext4", "kernel": "Linux x"},
    "results": [{"bench": "read", "op": "read", "size": 4096, "order": "random", "cache": "cold",
                 "latency_ns": {"p50": 90000, "mean": 95000.0}}],
    "errors": [],
}


def test_a_new_store_has_the_current_schema_in_wal_mode(tmp_path: Path) -> None:
    with ResultsStore(tmp_path / "s.sqlite") as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.journal_mode == "wal"


def test_fsbench_runs_round_trip(tmp_path: Path) -> None:
    with ResultsStore(tmp_path / "s.sqlite") as store:
        run_id = store.save_fsbench(FSBENCH_DOC, label="ext4")
        assert store.measurements(run_id) == FSBENCH_DOC["results"]
        assert store.run_environment(run_id) == FSBENCH_DOC["environment"]
        [run] = store.runs()
        assert (run.id, run.kind, run.label, run.status, run.measurements) == (run_id, "fsbench", "ext4", "ok", 1)


def test_identical_environments_are_stored_once(tmp_path: Path) -> None:
    with ResultsStore(tmp_path / "s.sqlite") as store:
        store.save_fsbench(FSBENCH_DOC)
        store.save_fsbench(FSBENCH_DOC)
        assert store.counts()["environments"] == 1


def test_readers_proceed_while_a_writer_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with ResultsStore(path) as writer, ResultsStore(path) as reader:
        writer.save_fsbench(FSBENCH_DOC)
        with writer.write() as conn:
            conn.execute("INSERT INTO runs(kind, status, started) VALUES ('x', 'running', 'now')")
            started = time.monotonic()
            assert len(reader.runs()) == 1  # sees the committed state, without waiting
            assert time.monotonic() - started < 1.0


def test_a_second_writer_waits_for_the_first_instead_of_failing(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    ResultsStore(path).close()
    released = threading.Event()

    def hold_lock() -> None:
        with ResultsStore(path) as first, first.write():
            released.wait(5)
            time.sleep(0.3)

    holder = threading.Thread(target=hold_lock)
    holder.start()
    time.sleep(0.1)
    released.set()
    with ResultsStore(path, busy_timeout_ms=10000) as second:
        started = time.monotonic()
        second.save_fsbench(FSBENCH_DOC)
        assert time.monotonic() - started >= 0.1
    holder.join()


def test_a_store_from_a_newer_fsbm_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(FsbmError, match="newer than this fsbm"):
        ResultsStore(path)


def test_a_file_that_is_not_a_store_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database at all, just words " * 100)
    with pytest.raises(FsbmError, match="not a usable fsbm results store"):
        ResultsStore(path)
    assert path.read_text().startswith("not a database")


def test_the_newest_document_of_a_name_is_found_without_reading_the_others(tmp_path: Path) -> None:
    with ResultsStore(tmp_path / "s.sqlite") as store:
        assert store.newest_document_id("cost_table", "ext4") is None
        first = store.save_document("cost_table", {"n": 1}, name="ext4")
        store.save_document("cost_table", {"n": 2}, name="xfs")
        store.save_document("probe", {"n": 3}, name="ext4")
        assert store.newest_document_id("cost_table", "ext4") == first
        second = store.save_document("cost_table", {"n": 4}, name="ext4")
        assert store.newest_document_id("cost_table", "ext4") == second
        assert store.newest_document_id("runtime_model", "ext4") is None


def test_a_document_that_names_its_own_id_is_encoded_once_with_it(tmp_path: Path) -> None:
    encoded: list[int] = []

    def encode(document_id: int) -> str:
        encoded.append(document_id)
        return f'{{"id": {document_id}}}'

    with ResultsStore(tmp_path / "s.sqlite") as store:
        first = store.save_document("prediction", {"id": None})
        second, body = store.save_named_document("prediction", encode, name="p")
        assert encoded == [second] and second == first + 1 and body == f'{{"id": {second}}}'
        assert store.document(second, "prediction") is not None
        assert store.document(second, "prediction")[2] == {"id": second}


def test_a_named_document_whose_encoding_fails_leaves_nothing_behind(tmp_path: Path) -> None:
    def encode(document_id: int) -> str:
        raise ValueError("cannot encode")

    with ResultsStore(tmp_path / "s.sqlite") as store:
        with pytest.raises(ValueError):
            store.save_named_document("prediction", encode)
        assert store.document_names("prediction") == []


def test_large_bodies_are_kept_compressed_and_read_back_whole(tmp_path: Path) -> None:
    large = {"lines": [{"source": f"fsbench read random cold {i} B", "ns": i * 1.5} for i in range(2000)]}
    with ResultsStore(tmp_path / "s.sqlite") as store:
        big = store.save_document("prediction", large, name="big")
        named, body = store.save_named_document("prediction", lambda i: json.dumps({**large, "id": i}), name="named")
        small = store.save_document("prediction", {"n": 1}, name="small")
        assert store.document(big, "prediction")[2] == large
        assert store.document(named, "prediction")[2] == {**large, "id": named} == json.loads(body)
        assert [b for _, _, b in store.documents("prediction", name="small")] == [{"n": 1}]
        assert store.export_document(big)["body"] == large
        sizes = {r.id: r.bytes for r in store.document_records("prediction")}
        assert sizes == {big: len(json.dumps(large)), named: len(body), small: len(json.dumps({"n": 1}))}
    kept = dict(sqlite3.connect(tmp_path / "s.sqlite").execute("SELECT id, body FROM documents").fetchall())
    assert isinstance(kept[big], bytes) and len(kept[big]) < len(json.dumps(large)) / 3 < COMPRESS_ABOVE * 20
    assert isinstance(kept[small], str)


def test_a_store_of_the_previous_version_is_upgraded_and_its_text_bodies_still_read(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with ResultsStore(path) as store:
        store.save_document("profile", {"words": "x" * (2 * COMPRESS_ABOVE)}, name="p")
    conn = sqlite3.connect(path)  # as version 2 left it: no json_bytes column, bodies as text
    conn.execute("ALTER TABLE documents DROP COLUMN json_bytes")
    conn.execute("UPDATE documents SET body = ?", (json.dumps({"words": "x" * (2 * COMPRESS_ABOVE)}),))
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    with ResultsStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        [(_, _, body)] = store.documents("profile")
        assert body == {"words": "x" * (2 * COMPRESS_ABOVE)}
        assert [r.bytes for r in store.document_records("profile")] == [len(json.dumps(body))]



def _in_the_database_file(path: Path, tmp_path: Path) -> int:
    """The profiles the database file holds by itself, without its WAL: what checkpoints
    copied.  Read while nothing checkpoints, so the file is whole."""
    alone = tmp_path / "alone.sqlite"
    alone.write_bytes(path.read_bytes())
    with sqlite3.connect(alone) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM documents WHERE kind = 'profile'").fetchone()[0])


def test_a_handle_without_checkpoints_leaves_them_to_the_checkpointer(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    wal = tmp_path / "s.sqlite-wal"
    page = {"text": "x" * 3000}  # under COMPRESS_ABOVE: a page or so per document
    ResultsStore(path).close()  # made, and copied into the file as the last handle closed
    with ResultsStore(path, checkpoints=False) as store:
        for _ in range(1500):  # past SQLite's 1,000 pages, where a commit would copy them itself
            store.save_document("profile", page)
        assert _in_the_database_file(path, tmp_path) == 0
        grown = wal.stat().st_size
        checkpointer = Checkpointer(path)
        try:
            for _ in range(2000):  # 2 s or more: checkpoints run while the handle writes
                store.save_document("profile", page)
                time.sleep(0.001)
        finally:
            checkpointer.stop()
        # Once a checkpoint has copied every frame, the next commit starts the WAL over.
        assert wal.stat().st_size < grown * 1.5
        assert _in_the_database_file(path, tmp_path) == 3500


def test_an_exported_profile_reads_as_the_profile_it_wraps(tmp_path: Path) -> None:
    from fsbm.characterizer.profile import SCHEMA_VERSION as PROFILE_SCHEMA, Profile
    from fsbm.errors import UsageError

    body = {"schema_version": PROFILE_SCHEMA, "kind": "profile", "source": "a job", "tang": {"read_pct": 50.0}}
    with ResultsStore(tmp_path / "s.sqlite") as store:
        exported = store.export_document(store.save_document("profile", body, name="a job"))
        table = store.export_document(store.save_document("cost_table", {"kind": "cost_table"}, name="ext4"))
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(exported))
    assert Profile.load(path).body == body  # `fsbm store export` then `fsbm predict` or `characterize`
    path.write_text(json.dumps(table))
    with pytest.raises(UsageError, match="is an exported cost_table, not a workload profile"):
        Profile.load(path)

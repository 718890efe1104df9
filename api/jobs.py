"""Trace uploads and the jobs that turn them into profiles (POST /v1/traces).

An upload is streamed to disk in the store's own directory (uploads/<job id>/), never
anywhere a client names: the job id is random hex made here, and the file name the client
gives is reduced to a plain base name.  Too large an upload is cut off and removed.  The
job then parses and characterizes the trace in a worker thread and keeps the profile in
the store; its row in the jobs table is what GET /v1/jobs/{id} reports.

Jobs run in two lanes, so that one long upload never holds up the small ones behind it: an
upload of at most SMALL_UPLOAD_BYTES goes to the small lane, a larger one to the large lane,
each a pool of its own.  A queued job says how many bytes are ahead of it in its lane and
about how long they take, at the rate this server last parsed at.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from fsbm.errors import FsbmError
from fsbm.store import JobRecord, ResultsStore

JOB_ID = re.compile(r"^[0-9a-f]{32}$")
UPLOAD_DIRECTORY = "uploads"
SMALL_UPLOAD_BYTES = 8 << 20
# Until a job has finished here, the rate a wait is estimated at: a conservative strace
# parse and characterization (the native parser runs at tens of MB/s).
DEFAULT_BYTES_PER_SECOND = 10e6


@dataclass
class _Lane:
    """One pool of job workers and the bytes queued or running in it."""

    name: str
    pool: ThreadPoolExecutor
    pending_bytes: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class UploadRefused(Exception):
    """An upload that is not kept: its HTTP status and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def safe_name(name: str) -> str:
    """A client's file name as a plain base name (its suffix tells the parser the format)."""
    base = re.sub(r"[^A-Za-z0-9._-]", "_", name.replace("\\", "/").rsplit("/", 1)[-1]).lstrip(".")
    return base[:120] or "trace"


def parse_recording(text: Optional[str]) -> Optional[dict[str, Any]]:
    """The recording facts (LOG.recording.json of `fsbm trace record`) sent with a log, checked."""
    if text is None:
        return None
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"recording is not JSON: {exc}") from None
    if not isinstance(body, dict) or not isinstance(body.get("user_cpu_ns"), int) or body["user_cpu_ns"] < 0:
        raise ValueError("recording must be the JSON object `fsbm trace record` writes beside a log "
                         "(with a non-negative integer user_cpu_ns)")
    return body


class Jobs:
    """Uploads and their background processing, for one store."""

    def __init__(self, store_path: Path, max_upload_bytes: int) -> None:
        self.store_path = store_path
        self.root = store_path.parent / UPLOAD_DIRECTORY
        self.max_upload_bytes = max_upload_bytes
        self._lanes = {name: _Lane(name, ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"fsbm-job-{name}"))
                       for name in ("small", "large")}
        self._bytes_per_second = DEFAULT_BYTES_PER_SECOND

    def recover(self) -> None:
        """Jobs a stopped server left unfinished are failed, not left 'running' forever."""
        with ResultsStore(self.store_path) as store:
            for job in store.unfinished_jobs():
                store.update_job(job.id, status="failed", message="the server stopped while this job ran")

    def shutdown(self) -> None:
        for lane in self._lanes.values():
            lane.pool.shutdown(wait=False, cancel_futures=True)

    async def receive(self, chunks: AsyncIterator[bytes], name: str, recording: Optional[dict[str, Any]],
                      keep_going: bool, scope: Optional[str]) -> JobRecord:
        """Stream an upload to disk, then queue its job; the job as created."""
        job_id = uuid.uuid4().hex
        directory = self.root / job_id
        directory.mkdir(parents=True)
        trace = directory / safe_name(name)
        size = 0
        try:
            with open(trace, "wb") as out:
                async for chunk in chunks:
                    size += len(chunk)
                    if size > self.max_upload_bytes:
                        raise UploadRefused(413, f"the upload is larger than the limit of "
                                                 f"{self.max_upload_bytes:,} bytes")
                    out.write(chunk)
            if size == 0:
                raise UploadRefused(400, "the upload is empty: send the trace as the request body")
            if recording is not None:
                (directory / (trace.name + ".recording.json")).write_text(json.dumps(recording))
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        job_input = {"trace_name": trace.name, "size_bytes": size, "keep_going": keep_going, "scope": scope}
        lane = self._lanes["small" if size <= SMALL_UPLOAD_BYTES else "large"]
        with lane.lock:
            ahead = lane.pending_bytes
            lane.pending_bytes += size
        with ResultsStore(self.store_path) as store:
            job = store.create_job(job_id, "trace", job_input)
            if ahead:
                store.update_job(job_id, message=f"queued in the {lane.name}-upload lane behind {ahead:,} bytes of "
                                                 f"traces: about {ahead / self._bytes_per_second:.0f} s")
                job = store.job(job_id) or job
        lane.pool.submit(self._run, lane, job_id, trace, size, keep_going, scope)
        return job

    def _run(self, lane: _Lane, job_id: str, trace: Path, size: int, keep_going: bool, scope: Optional[str]) -> None:
        from fsbm.characterizer.characterize import characterize_files
        from fsbm.traces.ingest import ingest

        started = time.monotonic()
        with ResultsStore(self.store_path) as store:
            try:
                store.update_job(job_id, status="running", progress=0.1, message="parsing the trace")
                result = ingest([trace], trace.parent / "events.parquet", force=True, keep_going=keep_going)
                store.update_job(job_id, progress=0.6, message=f"characterizing {result.events:,} events")
                profile = characterize_files([result.output], scope=scope).to_json()
                profile["source"] = trace.name
                profile_id = store.save_document("profile", profile, name=trace.name)
                store.update_job(job_id, status="done", progress=1.0, result={"profile_id": profile_id},
                                 message=f"profile {profile_id} of {result.events:,} events")
            except FsbmError as exc:
                message = _as_uploaded(exc.message, trace)
                store.update_job(job_id, status="failed", message=message, result={"error": message})
            except Exception as exc:  # a bug: the job says so rather than hanging at 'running'
                message = _as_uploaded(f"internal error: {type(exc).__name__}: {exc}", trace)
                store.update_job(job_id, status="failed", message=message,
                                 result={"error": f"internal error: {type(exc).__name__}"})
            finally:
                (trace.parent / "events.parquet").unlink(missing_ok=True)
                with lane.lock:
                    lane.pending_bytes -= size
                took = time.monotonic() - started
                if size >= 1 << 20 and took > 0:
                    self._bytes_per_second = size / took


def job_view(job: JobRecord) -> dict[str, Any]:
    """A jobs row as the API's Job model."""
    result = job.result or {}
    profile_id = result.get("profile_id")
    return {"id": job.id, "kind": job.kind, "status": job.status, "progress": job.progress, "message": job.message,
            "created": job.created, "updated": job.updated, "trace_name": job.input.get("trace_name"),
            "size_bytes": job.input.get("size_bytes"), "profile_id": profile_id,
            "profile_url": f"/v1/profiles/{profile_id}" if profile_id else None, "error": result.get("error")}


def _as_uploaded(message: str, trace: Path) -> str:
    """An error as the client knows its upload: by the name it sent, never the server's path."""
    return message.replace(str(trace.parent / "events.parquet"), "events").replace(str(trace), trace.name) \
        .replace(str(trace.parent), "the upload")

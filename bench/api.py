#!/usr/bin/env python3
"""The prediction API under load, against a named baseline measured in the same run.

`fsbm serve` runs on loopback in its own process; a load generator (httpx, asyncio) sends
POST /v1/predictions for a stored profile on every candidate the store holds (up to four),
with 1 and then 32 clients, each client sending its next request as soon as the last is
answered.  Bounded in count and in time.  Twice: the same question again and again (the
service answers it from memory after the first time, as it would a dashboard polling), and
distinct questions (each another page-cache size: every one predicted and stored; its
filesystem time is priced once per point of the profile's reuse curve its size reaches, as
it would be for any client, since the price depends on the size only through that point).
Baseline:
GET /healthz at the same concurrency, which costs the framework, the network stack and the
client but no prediction.

Targets (issues 8 and 36): p99 under 50 ms at 32 clients, for the same question and for
distinct ones; zero errors.

The store: a copy of --store, else of the default store if it holds cost tables of at least
two candidates (after `make demo` it holds four), else a temporary one with quick cost tables
of a scratch tmpfs and ext4 measured now.  The store given is never written to.  The profile is of a real program (cp -r, grep -r,
rm -rf of a 200-file tree) recorded now with `fsbm trace record`.

The server runs one process per core (--workers), as a server of this machine would.

Usage: .venv/bin/python bench/api.py [--requests 10000] [--seconds 30] [--workers CORES]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


from fsbm.api.prediction_service import PredictionService
from fsbm.api.server_process import free_port, wait_until_healthy
from fsbm.characterizer.characterize import characterize_files
from fsbm.errors import FsbmError
from fsbm.locations import default_store_path
from fsbm.microbench import scratch
from fsbm.store import ResultsStore
from fsbm.traces.ingest import ingest
from fsbm.traces.record import record

FSBM = str(Path(sys.executable).parent / "fsbm")
_QUESTIONS = itertools.count()  # distinct page-cache sizes, never asked twice in a run


def _candidates(store_path: Path) -> list[str]:
    with ResultsStore(store_path) as store:
        names = [name for _, name, _ in store.document_names("cost_table") if name]
    return list(dict.fromkeys(names))[:4]


def _measured_store(home: Path) -> Path:
    """A store with quick cost tables of a scratch tmpfs and ext4 (about 90 s)."""
    env = {**os.environ, "FSBM_HOME": str(home)}
    for fstype in ("tmpfs", "ext4"):
        fs = scratch.create(fstype, 512 << 20, name=f"bench-api-{fstype}", root=home / "scratch")
        try:
            subprocess.run([FSBM, "bench", "--fs", fs.name, "--quick", "--only", "meta,read,write,overwrite,fsync"],
                           env=env, check=True, stdout=subprocess.DEVNULL)
        finally:
            scratch.destroy(fs.name, home / "scratch")
    return home / "fsbm.sqlite"


def _copy(store_path: Path, destination: Path) -> Path:
    """A consistent copy of a store (SQLite's online backup), for the benchmark to write into."""
    with sqlite3.connect(store_path) as source, sqlite3.connect(destination) as copy:
        source.backup(copy)
    return destination


def _stored_profile(store_path: Path, tmp: Path) -> int:
    """A real program recorded here, characterized and kept in the store."""
    work = tmp / "work"
    (work / "src").mkdir(parents=True)
    for i in range(200):
        (work / "src" / f"f{i}.c").write_bytes(os.urandom(500 + 97 * i))
    log = record(["sh", "-c", "cp -r src copy && grep -rc zzz copy > /dev/null; rm -rf copy"], tmp / "w.strace",
                 cwd=work, scope=work, quiet=True).log
    profile = characterize_files([ingest([log], tmp / "e.parquet").output]).to_json()
    profile["source"] = "bench: cp -r, grep -r, rm -rf of a 200-file tree"
    with ResultsStore(store_path) as store:
        return store.save_document("profile", profile, name=profile["source"])


class _Connection:
    """One keep-alive HTTP/1.1 connection, as little client as a load generator can be: httpx's
    pool costs more CPU per request than the server at 32 clients on two cores."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, host: str, port: int) -> "_Connection":
        return cls(*await asyncio.open_connection(host, port))

    async def request(self, method: str, path: str, body: bytes | None) -> int:
        head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.writer.write(head.encode() + b"\r\n" + (body or b""))
        status = int((await self.reader.readline()).split()[1])
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        await self.reader.readexactly(length)
        return status

    def close(self) -> None:
        self.writer.close()


async def _load(port: int, method: str, path: str, body: dict | None, clients: int, requests: int,
                seconds: float, distinct: bool = False) -> dict[str, float]:
    """`clients` concurrent clients, each on its own connection, `requests` in all or until
    `seconds` pass.  `distinct`: every request asks about another page-cache size, so none is
    answered from memory."""
    latencies: list[float] = []
    errors = 0
    remaining = requests
    deadline = time.perf_counter() + seconds

    async def one_client() -> None:
        nonlocal remaining, errors
        connection = await _Connection.open("127.0.0.1", port)
        try:
            while remaining > 0 and time.perf_counter() < deadline:
                remaining -= 1
                asked = {**body, "cache_bytes": (1 << 30) + 4096 * next(_QUESTIONS)} if distinct and body else body
                payload = json.dumps(asked).encode() if asked is not None else None
                started = time.perf_counter()
                try:
                    ok = await connection.request(method, path, payload) < 300
                except (OSError, ValueError, IndexError, asyncio.IncompleteReadError):
                    ok = False
                    connection.close()
                    connection = await _Connection.open("127.0.0.1", port)
                latencies.append(time.perf_counter() - started)
                errors += not ok
        finally:
            connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(one_client() for _ in range(clients)))
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {"requests": len(latencies), "errors": errors, "seconds": elapsed,
            "rps": len(latencies) / elapsed, "p50_ms": 1e3 * statistics.median(latencies),
            "p99_ms": 1e3 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, help="A results store with cost tables (default: see above).")
    parser.add_argument("--requests", type=int, default=10000, help="Requests per measurement (at most).")
    parser.add_argument("--seconds", type=float, default=30.0, help="Time per measurement (at most).")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="fsbm serve --workers (default: one per core).")
    parser.add_argument("--json", type=Path, help="Also write the figures here.")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="fsbm-bench-api-") as tmp_name:
        tmp = Path(tmp_name)
        store_path = args.store or default_store_path()
        if args.store is None and (not store_path.exists() or len(_candidates(store_path)) < 2):
            print("measuring quick cost tables of a scratch tmpfs and ext4 (no store with two candidates)")
            store_path = _measured_store(tmp / "home")
        else:
            store_path = _copy(store_path, tmp / "fsbm.sqlite")  # the load adds thousands of predictions
        candidates = _candidates(store_path)
        if not candidates:
            print(f"{store_path} holds no cost table; run `make demo` or `fsbm bench` first", file=sys.stderr)
            return 2
        profile_id = _stored_profile(store_path, tmp)
        body = {"profile_id": profile_id, "candidates": candidates}
        with ResultsStore(store_path) as store:  # a prediction works before the server is timed
            PredictionService(store_path).predict(store, PredictionService(store_path).profile(store, profile_id), candidates)
        port = free_port()
        server = subprocess.Popen([FSBM, "serve", "--port", str(port), "--workers", str(args.workers)],
                                  env={**os.environ, "FSBM_STORE": str(store_path)}, stdout=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_healthy(base, server)
            print(f"fsbm serve --workers {args.workers} on {base}; store {store_path}; profile {profile_id}; "
                  f"candidates {', '.join(candidates)}")
            asyncio.run(_load(port, "POST", "/v1/predictions", body, 4, 50, 10))  # warm every worker's caches
            results = {}
            for clients in (1, 32):
                for name, method, path, payload, distinct in (
                        ("healthz (baseline)", "GET", "/healthz", None, False),
                        ("predictions", "POST", "/v1/predictions", body, False),
                        ("distinct predictions", "POST", "/v1/predictions", body, True)):
                    r = asyncio.run(_load(port, method, path, payload, clients, args.requests, args.seconds,
                                          distinct))
                    results[f"{name} x{clients}"] = r
                    print(f"{name:20} {clients:>2} clients: {r['requests']:5} requests in {r['seconds']:5.1f} s, "
                          f"{r['rps']:7.1f} req/s, p50 {r['p50_ms']:6.2f} ms, p99 {r['p99_ms']:6.2f} ms, "
                          f"{r['errors']} errors")
            wal = store_path.with_name(store_path.name + "-wal")
            print(f"the store's WAL after the load: {wal.stat().st_size / 2**20:.1f} MiB "
                  "(the server's checkpoint thread copies it into the store as it goes)")
        finally:
            server.terminate()
            server.wait(timeout=30)
    for clients in (1, 32):
        h = results[f"healthz (baseline) x{clients}"]
        for name in ("predictions", "distinct predictions"):
            p = results[f"{name} x{clients}"]
            print(f"{clients:>2} clients: {name} / healthz: p50 {p['p50_ms'] / h['p50_ms']:.2f}x, "
                  f"p99 {p['p99_ms'] / h['p99_ms']:.2f}x, throughput {p['rps'] / h['rps']:.2f}x")
    at32 = {name: results[f"{name} x32"]["p99_ms"] for name in ("predictions", "distinct predictions")}
    met = max(at32.values()) < 50 and all(r["errors"] == 0 for r in results.values())
    print(f"target (p99 < 50 ms at 32 clients, same and distinct questions, no errors): "
          f"{'met' if met else 'NOT met'} (p99 {at32['predictions']:.1f} ms and {at32['distinct predictions']:.1f} ms, "
          f"errors {sum(r['errors'] for r in results.values())})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0 if met else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except FsbmError as e:  # a server that never came up: said, not timed
        print(f"bench/api.py: {e}", file=sys.stderr)
        sys.exit(1)

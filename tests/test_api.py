"""The HTTP API: a real store with real cost tables (quick fsbench on scratch ext4 and tmpfs)
and a real program recorded with `fsbm trace record`; TestClient for the behaviours, a real
uvicorn on loopback for the server, schemathesis against the OpenAPI schema."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from schemathesis.specs.openapi.checks import positive_data_acceptance
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings

from fsbm.api.models import Prediction
from fsbm.api.server_process import free_port, wait_until_healthy
from fsbm.api.http_api import create_app
from fsbm.errors import FsbmError

pytestmark = pytest.mark.cores_shared  # asserts nothing on a time it measures
from fsbm.traces.record import recording_path
from tests.conftest import SHARED_DATA, Served, chromium_path, run_fsbm


@pytest.fixture
def client(served: Served) -> Iterator[TestClient]:
    with TestClient(create_app(served.store)) as c:
        yield c


def _finished(client: TestClient, job: dict, headers: dict | None = None) -> dict:
    for _ in range(300):
        job = client.get(f"/v1/jobs/{job['id']}", headers=headers).json()
        if job["status"] in ("done", "failed"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job['id']} did not finish: {job}")


def _upload(client: TestClient, path: Path, **params: str) -> dict:
    response = client.post("/v1/traces", params={"name": path.name, **params}, content=path.read_bytes())
    assert response.status_code == 202, response.text
    assert response.headers["location"] == f"/v1/jobs/{response.json()['id']}"
    return response.json()


@pytest.mark.slow(seconds=35)
def test_a_recorded_trace_goes_from_upload_to_profile_to_prediction_to_report(client: TestClient,
                                                                              served: Served) -> None:
    job = _upload(client, served.log, recording=recording_path(served.log).read_text())
    assert job["status"] == "queued" and job["size_bytes"] == served.log.stat().st_size
    job = _finished(client, job)
    assert job["status"] == "done" and job["progress"] == 1.0, job
    profile = client.get(job["profile_url"]).json()["profile"]
    assert profile["recording"]["user_cpu_ns"] >= 0 and profile["classes"]["data"]["copy"]

    response = client.post("/v1/predictions", json={"profile_id": job["profile_id"],
                                                    "candidates": list(served.candidates)})
    assert response.status_code == 201, response.text
    prediction = response.json()
    assert response.headers["location"] == f"/v1/predictions/{prediction['id']}"
    assert prediction["absolute"] and prediction["profile_id"] == job["profile_id"]
    # The same question twice: the same stored answer, at the same place.
    question = {"profile_id": job["profile_id"], "candidates": list(served.candidates), "cache_bytes": 1 << 30}
    first, again = client.post("/v1/predictions", json=question), client.post("/v1/predictions", json=question)
    assert again.json()["id"] == first.json()["id"] and again.headers["location"] == first.headers["location"]
    listed = client.get("/v1/predictions", params={"limit": 1}).json()
    assert listed["items"][0]["id"] >= prediction["id"] and listed["next_offset"] in (None, 1)
    profiles = client.get("/v1/profiles").json()["items"]
    assert job["profile_id"] in [p["id"] for p in profiles]
    tables = client.get("/v1/tables").json()["items"]
    assert {t["name"] for t in tables} >= set(served.candidates)
    ext4, tmpfs = served.candidates
    assert prediction["ranking"]["order"] == [tmpfs, ext4]  # a cold disk against memory, for copy and delete
    for entry in prediction["candidates"]:
        assert entry["low_s"] <= entry["runtime_s"] <= entry["high_s"] and entry["lines"]
    assert client.get(f"/v1/predictions/{prediction['id']}").json() == prediction
    traced = client.post("/v1/predictions", json={"profile_id": job["profile_id"], "candidates": [ext4, tmpfs],
                                                  "traced_on": ext4})
    assert traced.status_code == 201 and traced.json()["traced_on"] == ext4, traced.text
    elsewhere = client.post("/v1/predictions", json={"profile_id": job["profile_id"], "candidates": [tmpfs],
                                                     "traced_on": ext4})
    assert elsewhere.status_code == 400 and "not one of the candidates" in elsewhere.json()["detail"]

    report = client.get(f"/v1/reports/{prediction['id']}")
    assert report.status_code == 200 and report.headers["content-type"].startswith("text/html")
    for heading in ("Verdict", "Predicted runtime", "Where the time goes", "The workload",
                    "If the machine had more or less memory", "The measurements behind it"):
        assert heading in report.text
    assert f"Choose <b>{tmpfs}</b>" not in report.text and "keeps nothing across a reboot" in report.text


def test_a_log_without_its_recording_still_predicts_and_says_what_the_time_outside_rests_on(
        client: TestClient, served: Served) -> None:
    job = _finished(client, _upload(client, served.log))
    assert job["status"] == "done"
    body = {"profile_id": job["profile_id"], "candidates": list(served.candidates)}
    absolute = client.post("/v1/predictions", json=body)
    assert absolute.status_code == 201, absolute.text
    assert absolute.json()["absolute"] and absolute.json()["outside_evidence"]
    relative = client.post("/v1/predictions", json={**body, "measured_s": 0.2, "traced_on": served.candidates[0]})
    assert relative.status_code == 201, relative.text
    by_name = {c["candidate"]: c for c in relative.json()["candidates"]}
    assert by_name[served.candidates[0]]["relative_s"] == 0.2


def test_an_inline_profile_is_checked_field_by_field(client: TestClient, served: Served) -> None:
    job = _finished(client, _upload(client, served.log, recording=recording_path(served.log).read_text()))
    profile = client.get(job["profile_url"]).json()["profile"]
    ok = client.post("/v1/predictions", json={"profile": profile, "candidates": [served.candidates[1]]})
    assert ok.status_code == 201, ok.text
    broken = {**profile, "classes": {**profile["classes"], "metadata": {"frobnicate": {"done": 1}}}}
    bad = client.post("/v1/predictions", json={"profile": broken, "candidates": [served.candidates[1]]})
    assert bad.status_code == 422 and "unknown operation frobnicate" in bad.text
    old = client.post("/v1/predictions", json={"profile": {**profile, "schema_version": 2},
                                               "candidates": [served.candidates[1]]})
    assert old.status_code == 422 and "characterize the trace again" in old.text


def test_numbers_json_does_not_have_are_refused_with_the_field_named(client: TestClient, served: Served) -> None:
    # Issue 38: NaN and infinities were accepted, then failed as 500s, and stored predictions
    # made from them could no longer be read.
    job = _finished(client, _upload(client, served.log, recording=recording_path(served.log).read_text()))
    profile = client.get(job["profile_url"]).json()["profile"]
    candidate = served.candidates[1]

    def post(body: dict) -> Any:
        return client.post("/v1/predictions", content=json.dumps(body), headers={"content-type": "application/json"})

    passed_through = post({"profile": {**profile, "tang": {"read_pct": float("nan")}}, "candidates": [candidate]})
    assert passed_through.status_code == 422 and "tang.read_pct is not a finite number" in passed_through.text
    typed = post({"profile": {**profile, "reuse": {**profile["reuse"], "block_reads": float("inf")}},
                  "candidates": [candidate]})
    assert typed.status_code == 422
    for field, value in (("cache_bytes", float("nan")), ("measured_s", float("-inf")), ("measured_s", 1e300)):
        response = post({"profile": profile, "candidates": [candidate], field: value, "traced_on": candidate})
        assert response.status_code == 422 and field in response.text, (field, response.text)
    long_name = post({"profile": profile, "candidates": ["y" * 100_000]})
    assert long_name.status_code == 400 and len(long_name.text) < 5000  # what was sent is not echoed whole


@pytest.mark.parametrize("body, status, says", [
    ({"candidates": ["x"]}, 422, "exactly one of profile_id and profile"),
    ({"profile_id": 1, "candidates": []}, 422, "at least 1 item"),
    ({"profile_id": 999999, "candidates": ["x"]}, 404, "no profile 999999"),
    ({"profile_id": 1, "candidates": ["x"], "measured_s": 1.0}, 422, "measured_s needs traced_on"),
    ({"profile_id": 1, "candidates": ["x"], "start": "lukewarm"}, 422, "cold"),
])
def test_malformed_prediction_requests_get_a_4xx_that_says_why(client: TestClient, body: dict, status: int,
                                                               says: str) -> None:
    response = client.post("/v1/predictions", json=body)
    assert response.status_code == status and says in response.text


def test_an_unknown_candidate_is_named_with_what_the_store_has(client: TestClient, served: Served) -> None:
    profile_id = _finished(client, _upload(client, served.log))["profile_id"]
    response = client.post("/v1/predictions", json={"profile_id": profile_id, "candidates": ["zfs"]})
    assert response.status_code == 400
    assert "no cost table for 'zfs'" in response.json()["detail"] and served.candidates[0] in response.json()["detail"]


def test_uploads_stay_in_the_store_directory_and_bad_ones_are_refused(served: Served, tmp_path: Path) -> None:
    with TestClient(create_app(served.store, max_upload_bytes=4096)) as client:
        escape = client.post("/v1/traces", params={"name": "../../../../tmp/evil.strace"}, content=b"x" * 100)
        assert escape.status_code == 202
        job = _finished(client, escape.json())
        uploads = served.store.parent / "uploads"
        assert (uploads / job["id"] / "evil.strace").exists() and not Path("/tmp/evil.strace").exists()
        assert job["status"] == "failed" and job["error"]  # 100 x's are not a trace: the job says so
        assert "evil.strace" in job["message"] and str(served.store.parent) not in job["message"]
        assert str(served.store.parent) not in client.get("/healthz").text  # no server path, key or none

        too_big = client.post("/v1/traces", params={"name": "big.strace"}, content=b"y" * 5000)
        assert too_big.status_code == 413 and "4,096 bytes" in too_big.json()["detail"]
        empty = client.post("/v1/traces", params={"name": "empty.strace"}, content=b"")
        assert empty.status_code == 400 and "empty" in empty.json()["detail"]
        assert sorted(p.name for p in uploads.iterdir() if (p / "big.strace").exists() or (p / "empty.strace").exists()) == []
        bad_recording = client.post("/v1/traces", params={"name": "a.strace", "recording": "{\"user_cpu_ns\": -1}"},
                                    content=b"z")
        assert bad_recording.status_code == 400 and "user_cpu_ns" in bad_recording.text
        assert client.get("/v1/jobs/not-a-job").status_code == 422
        assert client.get(f"/v1/jobs/{'0' * 32}").status_code == 404
        assert client.get("/v1/profiles/0").status_code == 422
        assert client.get("/v1/reports/987654").status_code == 404


def test_an_nfs_capture_is_characterized_through_tshark(client: TestClient) -> None:
    capture = SHARED_DATA / "nfs" / "epam-nfstrace" / "2sessions-tcp-wsize32k-tcp-wsize512k.pcap.bz2"
    job = _finished(client, _upload(client, capture))
    assert job["status"] == "done", job
    profile = client.get(job["profile_url"]).json()["profile"]
    assert profile["protocol"].startswith("nfs") and profile["events"] > 0


def test_the_api_key_is_required_when_set(served: Served) -> None:
    with TestClient(create_app(served.store, api_key="s3cret")) as client:
        assert client.get("/healthz").status_code == 200  # health needs no key
        assert client.get("/v1/filesystems").status_code == 401
        assert client.get("/v1/filesystems", headers={"X-API-Key": "wrong"}).status_code == 401
        listed = client.get("/v1/filesystems", headers={"X-API-Key": "s3cret"})
        assert listed.status_code == 200
        names = {t["candidate"] for t in listed.json()["cost_tables"]}
        assert set(served.candidates) <= names
        assert all(t["environment"]["fs_type"] for t in listed.json()["cost_tables"])


@pytest.mark.slow(seconds=12)
def test_the_cli_json_is_the_api_model(served: Served, tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    done = run_fsbm("predict", str(served.log), "--candidates", ",".join(served.candidates), "--json", str(out),
                    env=served.env)
    assert done.returncode == 0, done.stderr
    cli = json.loads(out.read_text())
    assert Prediction.model_validate(cli).model_dump(mode="json") == cli
    with TestClient(create_app(served.store)) as client:
        api = client.get(f"/v1/predictions/{cli['id']}").json()
    assert api == cli

    report = tmp_path / "r.html"
    done = run_fsbm("report", str(cli["id"]), "-o", str(report), env=served.env)
    assert done.returncode == 0, done.stderr
    assert "<svg" in report.read_text() and "Verdict" in report.read_text()
    again = run_fsbm("report", str(cli["id"]), "-o", str(report), env=served.env)
    assert again.returncode == 2 and "exists" in again.stderr  # nothing the user had is overwritten


def test_a_server_that_never_answers_is_reported_with_what_it_said() -> None:
    dead = subprocess.Popen([sys.executable, "-c", "import sys; sys.stderr.write('port in use'); sys.exit(3)"],
                            stderr=subprocess.PIPE, text=True)
    with pytest.raises(FsbmError, match="exited with status 3: port in use"):
        wait_until_healthy(f"http://127.0.0.1:{free_port()}", dead, seconds=10)


@pytest.mark.slow(seconds=15)
def test_fsbm_serve_answers_on_loopback(served: Served) -> None:
    port = free_port()
    server = subprocess.Popen([str(Path(sys.executable).parent / "fsbm"), "serve", "--port", str(port)],
                              env={**os.environ, **served.env, "FSBM_API_KEY": "k"}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_healthy(base, server)
        headers = {"X-API-Key": "k"}
        upload = httpx.post(f"{base}/v1/traces", params={"name": served.log.name,
                                                        "recording": recording_path(served.log).read_text()},
                            content=served.log.read_bytes(), headers=headers)
        assert upload.status_code == 202, upload.text
        for _ in range(300):
            job = httpx.get(f"{base}/v1/jobs/{upload.json()['id']}", headers=headers).json()
            if job["status"] in ("done", "failed"):
                break
            time.sleep(0.1)
        assert job["status"] == "done", job
        prediction = httpx.post(f"{base}/v1/predictions", headers=headers,
                                json={"profile_id": job["profile_id"], "candidates": list(served.candidates)})
        assert prediction.status_code == 201, prediction.text
        assert httpx.get(f"{base}/v1/reports/{prediction.json()['id']}", headers=headers).status_code == 200
        assert httpx.get(f"{base}/openapi.json").json()["info"]["title"] == "fsbm"
        _docs_render_offline(base)
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.mark.slow(seconds=13)
def test_schemathesis_finds_no_server_error_and_no_schema_violation(served: Served) -> None:
    """Every operation of the OpenAPI schema, with generated valid and invalid requests: no 5xx,
    every response (status, content type, body) as the schema says, invalid input rejected.  (Driven through hypothesis directly: schemathesis's
    pytest fixture loader does not run under this pytest.)"""
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(served.store))
    checked = []
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def check(case) -> None:  # type: ignore[no-untyped-def]
            # A request can fit the schema and still be wrong (a candidate the store lacks, a
            # recording that is not fsbm's JSON): that is a 400 saying why, not an acceptance.
            case.call_and_validate(excluded_checks=[positive_data_acceptance])

        check()
        checked.append(f"{operation.method.upper()} {operation.path}")
    assert len(checked) == 11 and "POST /v1/predictions" in checked


def _long_strace(path: Path, lines: int) -> Path:
    with open(path, "w") as f:
        f.write('1000 1634121765.422781 openat(AT_FDCWD, "/tmp/a", O_RDONLY) = 3</tmp/a>\n')
        f.writelines("1000 1634121765.422790 read(3</tmp/a>, \"abc\", 3) = 3\n" for _ in range(lines))
    return path


def test_a_long_upload_does_not_hold_up_the_small_ones_behind_it(served: Served, tmp_path: Path) -> None:
    # Two large uploads (about 20 MB each) and then a small one: the small job is done before
    # the first large one is, and the second large one says what is ahead of it.
    first, second = _long_strace(tmp_path / "first.strace", 300_000), _long_strace(tmp_path / "second.strace", 300_000)
    small = tmp_path / "small.strace"
    small.write_text('1000 1634121765.422781 openat(AT_FDCWD, "/tmp/b", O_RDONLY) = 3</tmp/b>\n')
    with TestClient(create_app(served.store)) as client:
        large_jobs = [_upload(client, first), _upload(client, second)]
        assert "queued in the large-upload lane behind" in large_jobs[1]["message"], large_jobs[1]
        small_job = _finished(client, _upload(client, small))
        assert small_job["status"] == "done", small_job
        assert client.get(f"/v1/jobs/{large_jobs[0]['id']}").json()["status"] in ("queued", "running")
        for job in large_jobs:
            assert _finished(client, job)["status"] == "done"


def _docs_render_offline(base: str) -> None:
    """/docs in a real browser that may reach nothing but the server: every script and style
    comes from fsbm's own install, and every route is listed (issue 36: they came from a CDN)."""
    from playwright.sync_api import sync_playwright

    outside: list[str] = []

    def only_the_server(route) -> None:  # type: ignore[no-untyped-def]
        if route.request.url.startswith(base):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.route("**/*", only_the_server)
            page.goto(f"{base}/docs")
            page.wait_for_selector(".opblock-summary-path", timeout=30_000)
            paths = set(page.locator(".opblock-summary-path").all_inner_texts())
            assert {"/v1/traces", "/v1/predictions", "/v1/profiles"} <= {p.replace("\u200b", "") for p in paths}
            assert page.goto(f"{base}/redoc").status == 404
        finally:
            browser.close()
    assert outside == [], outside


def _connections_held(pid: int) -> int:
    """The TCP sockets process `pid` holds (each accepted connection is one)."""
    held = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            held += os.readlink(fd).startswith("socket:")
        except OSError:
            pass
    return held


def _server_processes(supervisor: int) -> list[int]:
    """The server processes `fsbm serve --workers` runs (beside multiprocessing's resource tracker)."""
    children = [int(p) for p in Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()]
    return [pid for pid in children if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]


def _settled_connections(pid: int) -> int:
    """The sockets process `pid` holds once connections closed by their clients are closed
    on its side too: the same count twice, 0.2 s apart (at most 10 s)."""
    held = _connections_held(pid)
    for _ in range(50):
        time.sleep(0.2)
        now, held = held, _connections_held(pid)
        if now == held:
            break
    return held


def _until_each_serves(base: str, processes: list[int], seconds: float = 60) -> None:
    """Wait until each server process has been handed a connection: the supervisor hands them
    only to processes that said they are ready, while any is starting."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        idle = {pid: _connections_held(pid) for pid in processes}
        clients = [httpx.Client(base_url=base) for _ in range(2 * len(processes))]
        try:
            assert all(c.get("/healthz").status_code == 200 for c in clients)
            if all(_connections_held(pid) > idle[pid] for pid in processes):
                return
        finally:
            for c in clients:
                c.close()
        time.sleep(0.2)
    raise AssertionError(f"not every server process was serving after {seconds:.0f} s")


@pytest.mark.slow(seconds=13)
def test_a_server_process_that_dies_is_replaced_and_none_outlives_the_supervisor(served: Served) -> None:
    port = free_port()
    server = subprocess.Popen([str(Path(sys.executable).parent / "fsbm"), "serve", "--port", str(port),
                               "--workers", "2"], env={**os.environ, **served.env}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_healthy(base, server)
        first = _server_processes(server.pid)
        _until_each_serves(base, first)  # one killed as it starts would stop the server: a failed start
        os.kill(first[0], signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (len(now := _server_processes(server.pid)) < 2 or first[0] in now):
            time.sleep(0.2)
        replaced = _server_processes(server.pid)
        assert len(replaced) == 2 and first[0] not in replaced and first[1] in replaced
        wait_until_healthy(base, server)
        assert all(httpx.get(f"{base}/healthz").status_code == 200 for _ in range(6))  # both take connections
    finally:
        os.kill(server.pid, signal.SIGKILL)  # no chance to stop them: they see their connection to it close
        server.wait(timeout=30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in replaced):
        time.sleep(0.2)
    assert not any(Path(f"/proc/{pid}").exists() for pid in replaced)


@pytest.mark.slow(seconds=15)
def test_served_by_several_processes_connections_are_spread_over_them(served: Served) -> None:
    port = free_port()
    server = subprocess.Popen([str(Path(sys.executable).parent / "fsbm"), "serve", "--port", str(port),
                               "--workers", "2"], env={**os.environ, **served.env}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    clients: list[httpx.Client] = []
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_healthy(base, server)
        workers = _server_processes(server.pid)
        assert len(workers) == 2
        _until_each_serves(base, workers)  # while one starts, the other is handed every connection
        idle = {pid: _settled_connections(pid) for pid in workers}  # the probes' connections closed
        clients = [httpx.Client(base_url=base) for _ in range(32)]  # all at once, each on its own connection
        assert all(c.get("/healthz").status_code == 200 for c in clients)
        held = {pid: _connections_held(pid) - idle[pid] for pid in workers}
        # Handed round in turn: 16 each (one listening socket shared by both split them 31 to 1,
        # a socket each on the port 21 to 11).  A probe of before may still be closing.
        assert sum(held.values()) >= 31 and min(held.values()) >= 15, held
        refused = run_fsbm("serve", "--port", str(port), "--workers", "2", env=served.env)
        assert refused.returncode != 0 and f"cannot listen on 127.0.0.1:{port}" in refused.stderr
    finally:
        for c in clients:
            c.close()
        os.killpg(server.pid, signal.SIGINT)  # Ctrl-C: the whole group, the processes too
        _, said = server.communicate(timeout=30)
    assert server.returncode == 0 and "Traceback" not in said, said
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)


def test_a_prediction_as_csv_is_the_numbers_a_program_reads(served: Served) -> None:
    """CSV carries seconds, one row per candidate, as the JSON does: not the table's cells
    ("41.1 ms (19.0 ms-85.2 ms)"), which a spreadsheet cannot add up."""
    import csv
    import io

    args = ("predict", str(served.log), "--candidates", ",".join(served.candidates))
    as_csv = run_fsbm(*args, "--output-format", "csv", env=served.env)
    as_json = run_fsbm(*args, "--output-format", "json", env=served.env)
    assert as_csv.returncode == 0 and as_json.returncode == 0, as_csv.stderr + as_json.stderr
    rows = {row["candidate"]: row for row in csv.DictReader(io.StringIO(as_csv.stdout))}
    assert set(rows) == set(served.candidates)
    for entry in json.loads(as_json.stdout)["candidates"]:
        row = rows[entry["candidate"]]
        for column in ("runtime_s", "low_s", "high_s", "fs_s", "outside_s"):
            assert float(row[column]) == pytest.approx(entry[column], rel=1e-9), column
        assert float(row["low_s"]) <= float(row["runtime_s"]) <= float(row["high_s"])

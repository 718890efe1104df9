"""The fsbm command as a user runs it: clear errors, results in the store."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fsbm.microbench.scratch import ScratchFs
from fsbm.store import SCHEMA_VERSION, ResultsStore
from tests.conftest import require_root, run_fsbm, three_call_log

pytestmark = pytest.mark.cores_shared  # asserts nothing on a time it measures


def test_a_missing_target_is_one_line_and_exit_2(fsbm_home: Path) -> None:
    done = run_fsbm("bench", "--target", "/nonexistent/place")
    assert done.returncode == 2
    assert "target /nonexistent/place does not exist" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_target_and_fs_together_are_refused(fsbm_home: Path) -> None:
    done = run_fsbm("bench", "--target", "/tmp", "--fs", "ext4")
    assert done.returncode == 2 and "exactly one of --target DIR or --fs NAME" in done.stderr


def test_an_unknown_scratch_filesystem_is_named(fsbm_home: Path) -> None:
    done = run_fsbm("bench", "--fs", "nosuchfs")
    assert done.returncode == 2 and "no scratch filesystem named 'nosuchfs'" in done.stderr


def test_bench_stores_the_run_and_its_cost_table(fsbm_home: Path, tmpfs_fs: ScratchFs, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = run_fsbm("bench", "--fs", tmpfs_fs.name, "--only", "stat_file,read", "--sizes", "512,4k,64k",
                    "--caches", "warm", "--reps", "2", "--files", "200", "--file-size", "4M", "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert "stored as run 1" in done.stdout
    doc = json.loads(out.read_text())
    assert doc["cost_table"]["kind"] == "cost_table" and doc["cost_table"]["candidate"] == "tmpfs"
    assert {f["bench"] for f in doc["cost_table"]["fits"]} == {"read"}
    runs = run_fsbm("store", "runs")
    assert "fsbench" in runs.stdout and "tmpfs" in runs.stdout
    info = run_fsbm("store", "info")
    assert f"schema version: {SCHEMA_VERSION}" in info.stdout and "journal: wal" in info.stdout


def test_a_bench_whose_cases_failed_is_kept_but_is_not_a_cost_table(fsbm_home: Path, tmp_path: Path) -> None:
    # Issue 38: a bench that ran out of space was stored as a partial run, yet its cost
    # table became the candidate's newest, which predictions then used.
    require_root()
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(small)], check=True)
    try:
        done = run_fsbm("bench", "--target", str(small), "--quick", "--only", "read")
    finally:
        subprocess.run(["umount", str(small)], check=True)
    assert done.returncode == 1 and "No space left on device" in done.stderr
    assert "not as a cost table" in done.stderr
    with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
        assert store.runs("fsbench") and not store.documents("cost_table")


def test_bench_never_overwrites_an_existing_json(fsbm_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine.json"
    out.write_text("keep me")
    done = run_fsbm("bench", "--target", str(tmp_path), "--json", str(out))
    assert done.returncode == 2 and "exists" in done.stderr
    assert out.read_text() == "keep me"


@pytest.mark.parametrize("command", ["demo", "validate"])
def test_a_table_effort_of_nothing_is_refused_before_anything_is_made(fsbm_home: Path, command: str) -> None:
    for flags, expected in ((("--table-reps", "0"), "--table-reps"), (("--table-case-seconds", "0"), "--table-case-seconds")):
        done = run_fsbm(command, *flags)
        assert done.returncode == 2 and expected in done.stderr, done.stderr
    assert not (fsbm_home / "scratch").exists() or not any((fsbm_home / "scratch").iterdir())


def test_fs_create_rejects_an_unknown_type(fsbm_home: Path) -> None:
    done = run_fsbm("fs", "create", "zfs")
    assert done.returncode == 2 and "unknown filesystem 'zfs'" in done.stderr


def test_sigterm_during_bench_keeps_partial_results_and_leaves_no_work_files(
        fsbm_home: Path, tmpfs_fs: ScratchFs) -> None:
    import signal
    import subprocess
    import sys
    import time

    command = [str(Path(sys.executable).parent / "fsbm"), "bench", "--fs", tmpfs_fs.name, "--only", "meta",
               "--caches", "warm", "--files", "3000", "--reps", "5"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not list(tmpfs_fs.mount_point.glob("fsbench.*")) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr  # 128 + SIGTERM, as a shell reports it; it once said 130
    assert "bench interrupted: what was measured is kept as run 1" in stderr
    assert "Traceback" not in stderr
    assert list(tmpfs_fs.mount_point.iterdir()) == []
    runs = run_fsbm("store", "runs").stdout
    assert "interrupted" in runs
    # Kept as a run, never as a cost table: a table missing cases would break predictions later.
    with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
        assert store.run_status(1) == "interrupted" and not store.documents("cost_table")


def test_ctrl_c_while_the_command_loads_is_one_line_and_exit_130(fsbm_home: Path) -> None:
    # Issue 38: an interrupt in the first second or two (imports) printed a traceback.
    for delay in (0.3, 0.6, 1.0):  # within the load (the interpreter itself starts in ~50 ms)
        proc = subprocess.Popen([str(Path(sys.executable).parent / "fsbm"), "fs", "list"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        assert "Traceback" not in stderr, (delay, stderr)
        assert proc.returncode in (0, 130), (delay, proc.returncode, stderr)


def _until_it_catches(pid: int, signum: int, timeout_s: float = 30.0) -> None:
    """Wait until process `pid` has a handler for `signum` (its SigCgt mask in /proc)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
        if caught & (1 << (signum - 1)):
            return
        time.sleep(0.002)
    raise AssertionError(f"process {pid} never caught signal {signum}")


def test_sigterm_while_the_command_loads_is_one_line_and_exit_143(fsbm_home: Path) -> None:
    # It killed the command outright (exit -15), where once loaded it is told as exit 143.
    proc = subprocess.Popen([str(Path(sys.executable).parent / "fsbm"), "fs", "list"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    # As soon as fsbm catches SIGTERM (its first step), while the command still loads: a
    # fixed sleep raced the interpreter's start on a loaded host, which no handler can catch.
    _until_it_catches(proc.pid, signal.SIGTERM)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode in (0, 143) and "Traceback" not in stderr, (proc.returncode, stderr)


def test_commands_that_compute_nothing_load_no_numeric_library(fsbm_home: Path) -> None:
    # `--help`, `--version` and `fs list` start in a fifth of a second only while the
    # libraries that take a second to load (statsmodels, scipy, pandas) load where they are
    # used; bench/startup.py times it.  Which modules load is deterministic; the time is not.
    heavy = ("statsmodels", "scipy", "pandas", "numpy", "pyarrow", "sklearn", "fastapi")
    for args in (["--help"], ["--version"], ["fs", "list"]):
        probe = ("import sys\n"
                 f"sys.argv = ['fsbm', *{args!r}]\n"
                 "from fsbm.entry import main\n"
                 "try:\n    main()\n"
                 "except SystemExit:\n    pass\n"
                 f"print(sorted(m for m in {heavy!r} if m in sys.modules))")
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
        assert done.stdout.strip().splitlines()[-1] == "[]", (args, done.stdout[-500:], done.stderr[-500:])


def test_json_dash_is_the_only_thing_on_stdout(fsbm_home: Path, tmp_path: Path) -> None:
    # Issue 36: `--json -` created a file named "-"; like fio's --output-format=json, the
    # JSON is now the whole of standard output, and the table goes to standard error.
    log = three_call_log(tmp_path / "job.strace")
    done = run_fsbm("characterize", str(log), "--json", "-")
    assert done.returncode == 0, done.stderr
    profile = json.loads(done.stdout)
    assert profile["events"] == 3 and "stored" in done.stderr
    assert not (Path.cwd() / "-").exists()
    listed = run_fsbm("fs", "list", "--json", "-")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
    # A file is written as before, and not over one the user has.
    out = tmp_path / "list.json"
    out.write_text("mine")
    refused = run_fsbm("fs", "list", "--json", str(out))
    assert refused.returncode == 2 and out.read_text() == "mine"


def test_an_output_that_is_a_device_or_a_link_stays_one(fsbm_home: Path, tmp_path: Path, fsbench: Path) -> None:
    """fsbm's and fsbench's outputs are written beside their file and renamed over it, so a
    half-written one never replaces what was there; but a device (here a null device of the
    test's own, as /dev/null is) is written in place, and a symbolic link's target is
    replaced, the link kept.  Renamed over, /dev/null became a regular file on this machine."""
    import os
    import stat

    require_root()
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("old")
    link.symlink_to(real)
    log = three_call_log(tmp_path / "job.strace")
    for out in (null, link):
        done = run_fsbm("characterize", str(log), "--json", str(out), "--force")
        assert done.returncode == 0, done.stderr
    bench = subprocess.run([str(fsbench), "--target", str(tmp_path), "--only", "fsync_clean", "--quick", "--reps", "1",
                            "--json", str(null), "--force"], capture_output=True, text=True, timeout=60)
    assert bench.returncode == 0, bench.stderr
    assert stat.S_ISCHR(null.stat().st_mode) and null.read_bytes() == b""
    assert link.is_symlink() and json.loads(real.read_text())["events"] == 3
    relinked = subprocess.run([str(fsbench), "--target", str(tmp_path), "--only", "fsync_clean", "--quick", "--reps",
                               "1", "--json", str(link), "--force"], capture_output=True, text=True, timeout=60)
    assert relinked.returncode == 0, relinked.stderr
    assert link.is_symlink() and json.loads(real.read_text())["tool"] == "fsbench"
    assert sorted(p.name for p in tmp_path.iterdir() if "partial" in p.name) == []


def test_output_format_puts_json_or_csv_alone_on_stdout(fsbm_home: Path, tmp_path: Path) -> None:
    import csv
    import io

    log = three_call_log(tmp_path / "job.strace")
    as_csv = run_fsbm("characterize", str(log), "--output-format", "csv")
    assert as_csv.returncode == 0, as_csv.stderr
    rows = list(csv.reader(io.StringIO(as_csv.stdout)))
    assert rows[0] == ["statistic", "value"] and ["read calls", "33.3%"] in rows
    assert "stored" in as_csv.stderr
    as_json = run_fsbm("characterize", str(log), "--output-format", "json")
    assert json.loads(as_json.stdout)["events"] == 3
    runs = run_fsbm("store", "runs", "--output-format", "json")
    assert runs.returncode == 0 and json.loads(runs.stdout) == []
    wrong = run_fsbm("characterize", str(log), "--output-format", "yaml")
    assert wrong.returncode == 2 and "table, json, csv" in wrong.stderr and "Traceback" not in wrong.stderr

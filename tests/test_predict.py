"""Prediction end to end: a real program recorded with `fsbm trace record --scope`, real
cost tables from fsbench, `fsbm predict` and `fsbm validate` as a user runs them."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from collections import Counter
from pathlib import Path

import pyarrow.compute as pc

import pytest

from fsbm.api.render import format_seconds
from fsbm.characterizer.characterize import characterize_files
from fsbm.errors import FsbmError, UsageError
from fsbm.predictor.cost_table import CostTable
from fsbm.predictor.estimator import RuntimeEstimator
from fsbm.predictor.judge import (CPU_BEFORE, CPU_IN_ROUNDS, CPU_IN_ROUNDS_BRACKETED, CPU_IN_ROUNDS_PRICED,
                                  CPU_IN_ROUNDS_WARM, _adopted_form, features, judge)
from fsbm.predictor.model import price_workload
from fsbm.predictor.outside import outside_features
from fsbm.predictor.pricing import Pricer
from fsbm.traces.outside_files import UsedFiles, bounded_wait_ns
from fsbm.store import ResultsStore
from fsbm.traces.ingest import ingest, read_events
from fsbm.traces.record import median_cpu, outside_wait_pair, record
from tests.conftest import (QUICK_BENCH_FLAGS, QUICK_TABLE_EFFORT, QUICK_TABLE_FLAGS, Calibrated, give_calibration,
                            quick_table_efforts, run_fsbm, strace_tt)


def _tree(root: Path, files: int = 40) -> int:
    total = 0
    for i in range(files):
        directory = root / "src" / f"d{i % 4}"
        directory.mkdir(parents=True, exist_ok=True)
        data = os.urandom(1000 + 997 * i)
        (directory / f"f{i}.c").write_bytes(data)
        total += len(data)
    return total


def test_a_recording_keeps_cpu_time_and_scope_and_the_profile_holds_only_the_scope(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    total = _tree(work)
    recording = record(["sh", "-c", "cat /etc/passwd > /dev/null && cp -r src copy"], tmp_path / "t.strace",
                       cwd=work, scope=work)
    assert recording.returncode == 0
    assert recording.facts["user_cpu_ns"] >= 0 and recording.facts["scope"] == str(work.resolve())
    table = read_events(ingest([recording.log], tmp_path / "e.parquet").output)
    helper = str(recording.facts["helper_pid"])
    assert helper not in set(pc.unique(table["actor"].cast("string")).to_pylist())  # fsrusage's calls are not kept
    profile = characterize_files([tmp_path / "e.parquet"]).to_json()
    assert profile["scope"] == str(work.resolve())  # the recorded scope is the default
    assert profile["recording"]["recordings"] == 1
    assert profile["trace_time"]["outside_calls"] > 0  # /etc/passwd and the libraries: other filesystems
    # cp copies in the kernel (copy_file_range): each copy is of the class "copy", whole files.
    copies = profile["classes"]["data"]["copy"]
    assert sum(b["bytes"] for order in copies.values() for b in order.values()) == total
    assert "write" not in profile["classes"]["data"] and set(copies) == {"sequential"}
    everything = characterize_files([tmp_path / "e.parquet"], scope="/").to_json()
    assert everything["events"] > profile["events"]


def test_a_program_that_cannot_run_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    log = tmp_path / "t.strace"
    for command, said in ((["/nonexistent/prog"], "cannot run /nonexistent/prog: no such file"),
                          (["no-such-program-here"], "cannot run no-such-program-here: no such program on PATH"),
                          (["./script"], "cannot run ./script: not executable")):
        (tmp_path / "script").write_text("#!/bin/sh\n")
        with pytest.raises(UsageError, match=said):
            record(command, log, cwd=tmp_path)
        assert not log.exists()
    (tmp_path / "script").chmod(0o755)  # a path is taken from the directory the command runs in
    assert record(["./script"], log, cwd=tmp_path).returncode == 0


def test_untraced_runs_measure_the_cpu_time_tracing_bends_and_the_predictor_takes_it(tmp_path: Path) -> None:
    """A CPU-bound loop between a few file calls: its untraced runs keep their CPU time, and
    every run starts from what before_each leaves (here: the output removed)."""
    work = tmp_path / "work"
    work.mkdir()
    starts: list[bool] = []

    def before_each() -> None:
        starts.append((work / "out").exists())
        (work / "out").unlink(missing_ok=True)

    burn = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo $i > out"
    recording = record(["sh", "-c", burn], tmp_path / "t.strace", cwd=work, scope=work, untraced_runs=2,
                       before_each=before_each)
    assert recording.returncode == 0 and starts == [False, True, True]  # 2 untraced runs, then the traced one
    facts = recording.facts
    assert facts["untraced_runs"] == 2 and facts["untraced_exit_status"] == 0
    assert facts["untraced_user_cpu_ns"] > 20_000_000  # the loop is user time
    assert facts["untraced_wall_ns"] >= facts["untraced_user_cpu_ns"] * 0.5
    ingest([recording.log], tmp_path / "e.parquet")
    profile = characterize_files([tmp_path / "e.parquet"]).to_json()
    assert profile["recording"]["untraced_user_cpu_ns"] == facts["untraced_user_cpu_ns"]
    assert outside_features(profile)["user_cpu_s"] == facts["untraced_user_cpu_ns"] / 1e9
    # With the traced filesystem's modelled time, the system time beyond it is outside too.
    system = facts["untraced_system_cpu_ns"] / 1e9
    assert outside_features(profile, 0.0)["system_cpu_s"] == pytest.approx(system)
    assert outside_features(profile, system / 2)["system_cpu_s"] == pytest.approx(system / 2)
    assert outside_features(profile, system + 1.0)["system_cpu_s"] == 0.0


def test_cpu_time_spent_on_several_cores_at_once_counts_over_them() -> None:
    """make -j2 spends 1.4 s of CPU in 0.75 s: its runs with every file cached took less wall
    time than CPU time, so its CPU time outside counts over the cores it used at once; a
    program that idles (wall above CPU) counts its CPU whole."""
    from fsbm.predictor.outside import WARM_SYSTEM, WARM_USER, cpu_parallelism, outside_seconds
    from fsbm.traces.record import WARM_IDLE_FIELD

    parallel = {WARM_USER: 1_300_000_000, WARM_SYSTEM: 100_000_000, WARM_IDLE_FIELD: -700_000_000}
    assert cpu_parallelism(parallel) == pytest.approx(2.0)
    assert cpu_parallelism({**parallel, WARM_IDLE_FIELD: 50_000_000}) == 1.0
    assert cpu_parallelism({}) == 1.0  # a recording made without the warm runs
    features = {"user_cpu_s": 1.3, "system_cpu_s": 0.1, "outside_calls_s": 0.0, "outside_wait_s": 0.02,
                "outside_idle_s": 0.0, "cpu_parallelism": 2.0}
    assert outside_seconds(features) == pytest.approx(0.72)
    assert outside_seconds({k: v for k, v in features.items() if k != "cpu_parallelism"}) == pytest.approx(1.42)


def test_cold_untraced_runs_measure_the_wait_for_files_outside_the_scope(tmp_path: Path) -> None:
    """The trace names the executables, libraries and loader a cold run reads from outside
    its work directory (and, apart, the directory's own files); pairs of runs with the
    workload's files read in, one also those outside, measure the wait for them, bounded by
    their cold read, which the profile carries into the time outside."""
    from tests.conftest import require_root
    from fsbm.predictor.outside import outside_seconds
    from fsbm.traces.outside_files import elf_interpreter, outside_files

    require_root()
    work = tmp_path / "work"
    work.mkdir()
    # 8 MiB, so a cold run reads more than the programs it loads: their cold read alone
    # (about 12 ms here) once outlasted a cold run over a 64 KiB input (12.06 ms).
    (work / "input").write_bytes(os.urandom(8 << 20))
    starts: list[bool] = []

    def before_each() -> None:
        starts.append((work / "out").exists())
        (work / "out").unlink(missing_ok=True)

    recording = record(["sh", "-c", "cat input > out && tar -cf /dev/null input"], tmp_path / "t.strace", cwd=work,
                       scope=work, untraced_runs=2, before_each=before_each, cold=True)
    # 2 cold runs, the traced one, then 2 pairs of runs each followed by the cold read (which
    # starts as a run does, so the next pair's first run finds no output).
    assert recording.returncode == 0 and starts == [False, True, True, True, True, True, False, True, True]
    files = outside_files(recording.log, work, work)
    assert recording.used.outside == files  # what the pairs read in, and what validate reuses
    # The run's output is named too (it existed after the traced run); a pair's start removes
    # it, and reading in skips what is gone.
    assert set(recording.used.inside) == {(work / "input").resolve(), (work / "out").resolve()}
    names = {f.name for f in files}
    assert {"dash", "cat", "tar", "libc.so.6"} <= names or {"sh", "cat", "tar", "libc.so.6"} <= names
    loader = elf_interpreter(Path("/usr/bin/cat"))
    assert loader is not None and Path(os.path.realpath(loader)) in files  # opened by the kernel, seen by no call
    assert not any(f.is_relative_to(work.resolve()) for f in files) and not any(str(f).startswith("/dev/") for f in files)
    facts = recording.facts
    assert facts["outside_files"] == len(files) and facts["outside_bytes"] >= sum(f.stat().st_size for f in files[:3])
    # Reading them in cold is part of a cold run, but timed apart from it: on a busy host the
    # two are separate draws (52 ms read against a 46 ms run once), so only its size is checked.
    assert 0 < facts["outside_read_ns"] < 3 * facts["untraced_wall_ns"]
    assert facts["untraced_warm_user_cpu_ns"] + facts["untraced_warm_system_cpu_ns"] > 0
    assert 0 <= facts["untraced_outside_wait_ns"] <= facts["outside_read_ns"]
    ingest([recording.log], tmp_path / "e.parquet")
    profile = characterize_files([tmp_path / "e.parquet"]).to_json()
    assert profile["recording"]["untraced_outside_wait_ns"] == facts["untraced_outside_wait_ns"]
    features = outside_features(profile, 0.0)
    assert features["outside_wait_s"] == facts["untraced_outside_wait_ns"] / 1e9
    # The all-warm runs idled too (starting and reaping sh, cat and tar), as every run does.
    assert 0 < facts["untraced_warm_idle_ns"] < facts["untraced_wall_ns"]
    assert features["outside_idle_s"] == facts["untraced_warm_idle_ns"] / 1e9
    assert outside_seconds(features) == pytest.approx(
        features["user_cpu_s"] + features["system_cpu_s"] + features["outside_wait_s"] + features["outside_idle_s"])


def test_the_all_warm_runs_skip_their_syncs_and_say_so(tmp_path: Path, ext4_fs) -> None:
    """traces/nosync.py: the runs the time outside the filesystem is taken from make their
    syncs no-ops (libeatmydata, which `make` installs).  SQLite committing 60 transactions
    with synchronous=FULL on a real ext4: about 180 syncs, each a journal commit on the
    device, which the runs that skip them do not wait for."""
    from fsbm.traces.nosync import environment_without_syncs, sync_skipping_library
    from fsbm.traces.outside_files import UsedFiles
    from fsbm.traces.record import WARM_SYNCS_SKIPPED, measure_untraced, outside_wait_pair

    assert sync_skipping_library() is not None, "libeatmydata is missing: run `make install`"
    work = ext4_fs.mount_point / "sqlite"
    work.mkdir()
    script = ["PRAGMA journal_mode=DELETE;", "PRAGMA synchronous=FULL;", "CREATE TABLE t(x);"]
    script += [f"BEGIN; INSERT INTO t VALUES({i}); COMMIT;" for i in range(60)]
    (work / "script.sql").write_text("\n".join(script) + "\n")
    command = ["sqlite3", "db", ".read script.sql"]

    def start() -> None:
        (work / "db").unlink(missing_ok=True)

    def wall(env: dict[str, str] | None) -> float:
        return statistics.median(measure_untraced(command, 1, cwd=work, quiet=True, before_each=start, env=env)
                                 ["untraced_wall_ns"] for _ in range(3))

    assert wall(environment_without_syncs()) < 0.5 * wall(None)
    pair = outside_wait_pair(command, UsedFiles(), cwd=work, quiet=True, before_each=start)
    assert pair[WARM_SYNCS_SKIPPED] is True
    assert pair["warm_user_cpu_ns"] + pair["warm_system_cpu_ns"] > 0


def test_outside_files_keeps_regular_files_outside_the_scope_and_the_pseudo_filesystems(tmp_path: Path) -> None:
    """From log lines as strace -y writes them: a relative executable is found from the
    working directory; the scope (also through a symlink into it), /proc, missing files and
    empty files are left out; each file is kept once."""
    from fsbm.traces.outside_files import outside_files

    scope, elsewhere = tmp_path / "scope", tmp_path / "elsewhere"
    scope.mkdir()
    elsewhere.mkdir()
    (scope / "data").write_bytes(b"x" * 100)
    (elsewhere / "tool").write_bytes(b"#!/bin/sh\n")
    (elsewhere / "lib.so").write_bytes(b"y" * 100)
    (elsewhere / "empty").touch()
    (elsewhere / "into-scope").symlink_to(scope / "data")
    log = tmp_path / "t.strace"
    log.write_text("\n".join([
        '10 1.0 execve("tool", ["tool"], 0x7ffc /* 3 vars */) = 0 <0.000100>',
        f'10 1.1 openat(AT_FDCWD<{elsewhere}>, "lib.so", O_RDONLY) = 3<{elsewhere}/lib.so> <0.000010>',
        f'10 1.2 read(3<{elsewhere}/lib.so>, "y", 1) = 1 <0.000010>',
        f'10 1.3 openat(AT_FDCWD<{elsewhere}>, "data", O_RDONLY) = 4<{scope}/data> <0.000010>',
        f'10 1.4 openat(AT_FDCWD<{elsewhere}>, "x", O_RDONLY) = 5<{elsewhere}/into-scope> <0.000010>',
        '10 1.5 openat(AT_FDCWD</>, "/proc/self/status", O_RDONLY) = 6</proc/10/status> <0.000010>',
        f'10 1.6 openat(AT_FDCWD</>, "gone", O_RDONLY) = 7<{elsewhere}/gone> <0.000010>',
        f'10 1.7 openat(AT_FDCWD</>, "empty", O_RDONLY) = 8<{elsewhere}/empty> <0.000010>', ""]))
    assert outside_files(log, scope, elsewhere) == [(elsewhere / "tool").resolve(), (elsewhere / "lib.so").resolve()]


def test_the_wait_is_the_pairs_median_bounded_by_zero_and_the_cold_read() -> None:
    """A difference of two runs that drifted (negative, or more than reading the files can
    take) is held to what the wait can physically be."""
    assert bounded_wait_ns([9, 12, 10], [20, 18, 25]) == 10
    assert bounded_wait_ns([-410, 47, -21, 28, -101], [17, 13, 18, 18, 17]) == 0
    assert bounded_wait_ns([141, -13, 139, 57, 60], [18, 21, 18, 28, 16]) == 18
    assert bounded_wait_ns([-5, 30], []) == 12  # measured before the cold read was timed: only 0 bounds it


def test_untraced_runs_refuse_a_command_that_does_not_repeat_itself(tmp_path: Path) -> None:
    flip = "if [ -e done ]; then exit 3; fi; touch done"
    with pytest.raises(FsbmError, match="does not do the same work every time"):
        record(["sh", "-c", flip], tmp_path / "t.strace", cwd=tmp_path, untraced_runs=2)
    assert not (tmp_path / "t.strace").exists()  # refused before tracing


def test_the_wait_pairs_refuse_runs_that_exited_otherwise_than_the_cold_runs(tmp_path: Path) -> None:
    """A pair's run that failed (say, a program that cannot run with its syncs skipped) did
    other work: its time is no measure of the wait, nor its CPU time of the program's."""
    with pytest.raises(FsbmError, match="exited 1 in the run that read in .* where its cold runs exited 0"):
        outside_wait_pair(["false"], UsedFiles(), cwd=tmp_path, quiet=True, before_each=lambda: None)
    pair = outside_wait_pair(["false"], UsedFiles(), cwd=tmp_path, quiet=True, before_each=lambda: None,
                             expected_status=1)
    assert pair["outside_read_ns"] >= 0


# Asserts only orders and bounds that a second test on the other core cannot move: memory
# before a cold disk, CPU scales within 2x.
@pytest.mark.cores_shared
def test_predict_ranks_candidates_from_real_cost_tables(tmp_path: Path, fsbm_home: Path, calibrated: Calibrated,
                                                       ext4_fs, tmpfs_fs) -> None:
    for fs in (ext4_fs, tmpfs_fs):
        done = run_fsbm("bench", "--fs", fs.name, *QUICK_BENCH_FLAGS, "--only",
                        "meta,read,write,overwrite,fsync,fdatasync_overwrite,fsync_clean,fsync_dir,copy")
        assert done.returncode == 0, done.stderr
    work = ext4_fs.mount_point / "work"
    work.mkdir()
    _tree(work, 80)
    log = tmp_path / "w.strace"
    command = ["sh", "-c", f"cd {work} && cp -r src copy && grep -rc zzz copy > /dev/null; sync copy/d0/f0.c && "
               "rm -rf copy"]
    replays = ext4_fs.mount_point / "replays"
    replays.mkdir()
    (replays / "mine").write_text("kept")
    elsewhere = tmpfs_fs.mount_point / "replays"
    elsewhere.mkdir()
    for where, why in ((replays, "is not empty"), (elsewhere, "is not on the filesystem of --scope")):
        refused = run_fsbm("trace", "record", "-o", str(log), "--scope", str(work), "--untraced-runs", "1", "--cold",
                           "--replay-in", str(where), "--", *command)
        assert refused.returncode == 2 and why in refused.stderr and "Traceback" not in refused.stderr
        assert not log.exists()
    (replays / "mine").unlink()
    done = run_fsbm("trace", "record", "-o", str(log), "--scope", str(work), "--untraced-runs", "1", "--cold",
                    "--replay-in", str(replays), "--", *command)
    assert done.returncode == 0, done.stderr
    assert "cold runs wait" in done.stdout and "files outside" in done.stdout
    assert "CPU time of its calls in the scope, replayed cold" in done.stdout and not any(replays.iterdir())
    facts = json.loads(Path(f"{log}.recording.json").read_text())
    calls_cpu = {group: facts[f"untraced_calls_cpu_{group}_ns"] for group in ("metadata", "read", "write", "sync")}
    assert all(calls_cpu[g] > 0 for g in ("metadata", "read", "write")) and sum(calls_cpu.values()) < 10**9
    assert facts["calls_cpu_replays"] == 1 and facts["calls_cpu_replays_dropped"] == 0
    # ... shared by group as a bracketed replay counted them, adding up to the calls' CPU replayed without brackets.
    assert abs(sum(calls_cpu.values()) - facts["untraced_calls_cpu_unbracketed_ns"]) <= len(calls_cpu)
    assert facts["untraced_calls_cpu_bracketed_ns"] > 0 and "in all without brackets" in done.stdout
    # Beside the cold runs, cold runs with their syncs skipped; the measuring replays skipped them too.
    assert facts["untraced_calls_cpu_syncs_skipped"] is True
    assert facts["untraced_nosync_user_cpu_ns"] + facts["untraced_nosync_system_cpu_ns"] > 0
    assert "with its syncs skipped" in done.stdout
    out = tmp_path / "prediction.json"
    done = run_fsbm("predict", str(log), "--candidates", f"{ext4_fs.name},{tmpfs_fs.name}", "--json", str(out),
                    "--measured", "0.05", "--traced-on", ext4_fs.name)
    assert done.returncode == 0, done.stderr
    assert "predicted runtime" in done.stdout and "time outside the filesystem: " in done.stdout
    doc = json.loads(out.read_text())
    assert doc["absolute"] and doc["outside_evidence"]
    by_name = {c["candidate"]: c for c in doc["candidates"]}
    for entry in by_name.values():
        assert entry["low_s"] <= entry["runtime_s"] <= entry["high_s"]
        assert entry["runtime_s"] == entry["fs_s"] + entry["outside_s"]
        assert {"copy", "unlink", "read"} <= set(entry["breakdown_s"])
        assert all(line["source"] for line in entry["lines"])
    assert doc["ranking"]["order"][0] == tmpfs_fs.name  # memory beats a cold disk for a copy and delete
    wait = doc["outside_features"]["outside_wait_s"]  # measured by --cold, and part of the time outside
    assert 0 <= wait <= by_name[tmpfs_fs.name]["outside_s"]
    # tmpfs keeps nothing across a reboot: first in the order, never the choice.
    assert doc["ranking"]["references"] == [tmpfs_fs.name] and doc["ranking"]["best"] == ext4_fs.name
    assert doc["ranking"].get("runner_up") is None
    # Each group's CPU prices scaled by its calls' CPU measured by the replays on ext4.
    assert set(doc["cpu_scales"]) == set(calls_cpu) and doc["cpu_scales"]["sync"] >= 0
    assert all(0.5 <= doc["cpu_scales"][g] <= 2.0 for g in ("metadata", "read", "write"))
    assert set(doc["traced_cpu_ns"]) == set(calls_cpu)
    assert any(k != 1.0 for k in doc["cpu_scales"].values())
    assert by_name[ext4_fs.name]["relative_s"] == 0.05
    assert by_name[tmpfs_fs.name]["relative_s"] < 0.05
    with ResultsStore(Path(os.environ["FSBM_HOME"]) / "fsbm.sqlite") as store:
        assert store.documents("prediction")
    # A trace with no timestamps tells nothing of the time outside the filesystem: the
    # prediction is of the filesystem's time alone, and says so, on the terminal and in the report.
    untimed, untimed_out = tmp_path / "untimed.strace", tmp_path / "untimed.json"
    subprocess.run(["strace", "-f", "-y", "-o", str(untimed), *command], check=True, stdout=subprocess.DEVNULL)
    done = run_fsbm("predict", str(untimed), "--candidates", f"{ext4_fs.name},{tmpfs_fs.name}", "--json",
                    str(untimed_out))
    assert done.returncode == 0, done.stderr
    assert "runtime (90%)" not in done.stdout and "in the filesystem (90%)" in done.stdout
    assert "time outside the filesystem: not known, as the trace has no timestamps" in " ".join(done.stdout.split())
    doc = json.loads(untimed_out.read_text())
    assert not doc["absolute"] and all(c["outside_s"] == 0 for c in doc["candidates"])
    report = tmp_path / "untimed.html"
    done = run_fsbm("report", str(doc["id"]), "-o", str(report))
    assert done.returncode == 0, done.stderr
    page = report.read_text()
    assert "time inside the filesystem only" in page and "Time outside the filesystem: not known" in page
    ext4 = next(c for c in doc["candidates"] if c["candidate"] == ext4_fs.name)
    assert ext4["low_s"] < ext4["fs_s"] < ext4["high_s"]  # the filesystem's part has its interval, and the page shows it
    assert f"{format_seconds(ext4['low_s'])} to {format_seconds(ext4['high_s'])}" in page
    # A trace made while tracing ran unevenly (bare calls 61.5 us above their median on average)
    # is predicted with a warning, on the terminal, in the document and in its report.
    uneven, uneven_out = tmp_path / "uneven.strace", tmp_path / "uneven.json"
    lines, at = [], 0
    for k in range(400):
        call = ('openat(AT_FDCWD</w>, "f", O_RDONLY) = -1 ENOENT (No such file or directory)' if k % 40 == 0
                else "getpid() = 7")
        duration = 250 if k % 4 == 3 else 10
        lines.append(f"7 {strace_tt(at)} {call} <0.{duration:06d}>")
        at += duration + 30 + (500 if k % 20 == 0 else 0)
    uneven.write_text("\n".join(lines) + "\n")
    # A plain trace's band needs a tracing calibration: the session's, where predict would
    # measure a full one on first need (a minute; test_tracing checks when it is needed).
    give_calibration(calibrated, fsbm_home / "fsbm.sqlite")
    done = run_fsbm("predict", str(uneven), "--candidates", f"{ext4_fs.name},{tmpfs_fs.name}", "--json",
                    str(uneven_out))
    assert done.returncode == 0, done.stderr
    assert "warning: tracing ran unevenly while this trace was made" in " ".join(done.stdout.split())
    doc = json.loads(uneven_out.read_text())
    assert len(doc["warnings"]) == 1 and "390 bare calls lay 61.5 us above their median" in doc["warnings"][0]
    report = tmp_path / "uneven.html"
    assert run_fsbm("report", str(doc["id"]), "-o", str(report)).returncode == 0
    assert '<p class="warning" role="note"><strong>Warning:</strong> tracing ran unevenly' in report.read_text()
    missing = run_fsbm("predict", str(log), "--candidates", "nosuch")
    assert missing.returncode == 2 and "no cost table for 'nosuch'" in missing.stderr
    assert ext4_fs.name in missing.stderr and "Traceback" not in missing.stderr
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"kind": "profile", "schema_version": 2}))
    refused = run_fsbm("predict", str(old), "--candidates", ext4_fs.name)
    assert refused.returncode == 2 and "schema_version 2" in refused.stderr


def test_cost_tables_are_measured_spread_over_the_rounds() -> None:
    """validate measures each target's table `--table-repeats` times, from before the first
    round to after the last, so the tables see the disk the rounds saw."""
    from fsbm.predictor.validate import table_boundaries

    assert table_boundaries(5, 1) == [0]
    assert table_boundaries(5, 2) == [0, 5]
    assert table_boundaries(5, 3) == [0, 2, 5]
    assert table_boundaries(2, 5) == [0, 1, 2]  # never more often than between rounds


def test_the_doc_shows_how_each_tables_read_and_sync_moved_between_its_measurements() -> None:
    """A sync's cost followed the device from hour to hour (sqlite's largest misses), so the
    doc gives each measurement's 4 KiB fsync beside its cold read, in the order measured,
    and says so beside the verdict where either moved by half again or more."""
    from fsbm.api.validation import _cost_tables_section, _unsteady_section

    def table(at: str, read_us: float, sync_us: float) -> dict:
        entries = [{"bench": "read", "size": 4096, "order": "random", "cache": "cold",
                    "latency_ns": {"mean": read_us * 1e3}},
                   {"bench": "fsync", "size": 4096, "order": "sequential", "cache": "warm",
                    "latency_ns": {"mean": sync_us * 1e3}}]
        return {"measured_at": at, "entries": entries}

    doc = {"targets": [{"candidate": "val-ext4", "label": "ext4 fresh"}],
           "cost_table_runs": {"val-ext4": [table("2026-11-24T09:04:00", 116, 864),
                                            table("2026-11-24T09:25:00", 125, 2940)]}}
    rows = [line for line in _cost_tables_section(doc) if line.startswith("| ext4 fresh")]
    assert rows == ["| ext4 fresh | 2 | 09:04-09:25 UTC | 3.40x | 116, 125 | 864, 2940 |"]
    # A drift case that moved by 1.5x or more is called out beside the verdict; one that
    # moved less (the read, 1.08x) is not.
    (warning,) = [line for line in _unsteady_section(doc) if line]
    assert "ext4 fresh's 4 KiB fsync 864-2940 us (3.4x)" in warning and "random read" not in warning
    doc["cost_table_runs"]["val-ext4"][1] = table("2026-11-24T09:25:00", 125, 1200)
    assert _unsteady_section(doc) == []
    # Nor does a case with no device under it (tmpfs's fsync: 0.2 us, then 0.3).
    doc["cost_table_runs"]["val-ext4"] = [table("2026-11-24T09:04:00", 116, 0.2), table("2026-11-24T09:25:00", 125, 0.3)]
    assert _unsteady_section(doc) == []


def test_a_round_runs_each_program_on_every_target_back_to_back_in_a_shuffled_order() -> None:
    """Ratios between targets are judged within a round, so a program's runs on the targets
    are kept together (blocked by program), and both the blocks and the runs within them
    are shuffled from round to round."""
    import random

    from fsbm.predictor.suite import programs as suite
    from fsbm.predictor.validate import Target, round_order

    programs = suite()
    targets = [Target(f"fs{i}", f"fs{i}", Path(f"/mnt/{i}"), "fresh") for i in range(4)]
    # A short program records several times a round (validate.recordings_per_round), the others once.
    recordings = {p.name: 3 if p.name == "grep" else 1 for p in programs}
    rng = random.Random(1)
    rounds = [round_order(programs, targets, recordings, rng) for _ in range(6)]
    for order in rounds:
        assert len(order) == len(programs) * (len(targets) + 1) + 2
        names = [program.name for program, _ in order]
        blocks = [names[i] for i in range(len(names)) if i == 0 or names[i] != names[i - 1]]
        assert sorted(blocks) == sorted(p.name for p in programs)  # each program's runs in one block
        for program in programs:
            runs = [target for p, target in order if p is program]
            assert runs.count(None) == recordings[program.name]
            assert sorted(t.label for t in runs if t) == [t.label for t in targets]
    assert len({tuple(dict.fromkeys(p.name for p, _ in order)) for order in rounds}) > 1
    assert len({tuple(t.label if t else "" for _, t in order) for order in rounds}) > 1
    assert round_order(programs, targets, {}, rng).count((programs[0], None)) == 0  # no recordings asked


# Asserts what was run and judged, and of the times only what no second test on the other core
# can move: an fsync-bound program on memory faster than on a disk by 15%, CPU scales within 2x.
@pytest.mark.cores_shared
def test_validate_measures_programs_judges_them_and_calibrates(tmp_path: Path, fsbm_home: Path) -> None:
    from tests.conftest import require_root

    require_root()
    doc = tmp_path / "validation.md"
    done = run_fsbm("validate", "--candidates", "ext4,tmpfs", "--states", "fresh", "--rounds", "2", "--scale", "0.1",
                    "--only", "untar,sqlite,grep", "--table-repeats", "1", "--doc", str(doc),
                    "--json", str(tmp_path / "m.json"), *QUICK_TABLE_FLAGS, timeout=900)
    try:
        assert done.returncode == 0, done.stderr
        text = doc.read_text()
        assert "leave-one-program-out" in text and "| sqlite | tmpfs fresh |" in text
        measured = json.loads((tmp_path / "m.json").read_text())
        assert {r["kind"] for r in measured["records"]} == {"real", "replay", "recording"}
        # Each table grown by the programs' own cases, as `fsbm bench --for` would (maybe none at this scale).
        assert set(measured["workload_cases"]) <= {"val-ext4", "val-tmpfs"}
        # rounds x programs x targets x (real, replay), and each round's recording runs on the
        # traced filesystem: three of a program whose untraced cold run took under 0.2 s, else one.
        from fsbm.predictor.validate import SHORT_RUN_NS, SHORT_RUN_RECORDINGS
        per_round = {p["name"]: SHORT_RUN_RECORDINGS if p["profile"]["recording"]["untraced_wall_ns"] < SHORT_RUN_NS
                     else 1 for p in measured["programs"]}
        recordings = [r for r in measured["records"] if r["kind"] == "recording"]
        assert Counter(r["program"] for r in recordings) == {name: 2 * n for name, n in per_round.items()}
        assert len(measured["records"]) == 2 * 3 * 2 * 2 + len(recordings)
        assert {r["target"] for r in recordings} == {"ext4 fresh"}
        assert all(r["user_cpu_ns"] + r["system_cpu_ns"] > 0 and r["wall_ns"] > 0 for r in recordings)
        # A pair's difference of idle times (wall less CPU time), the walls' kept beside it; the
        # all-warm run's idle time.  Each is a few milliseconds here, measured in other runs than
        # the cold one: a host stall in one run of a pair (20 ms, once in CI) can exceed a cold
        # run of this size, so they are held to it with that much room.
        slack = 50_000_000
        assert all(abs(r["outside_wait_ns"]) < r["wall_ns"] + slack for r in recordings)
        assert all(abs(r["outside_wall_difference_ns"]) < r["wall_ns"] + slack and 0 < r["warm_idle_ns"] < r["wall_ns"] + slack
                   for r in recordings)
        assert all(0 < r["outside_read_ns"] and 0 < r["warm_user_cpu_ns"] + r["warm_system_cpu_ns"] for r in recordings)
        # Every replay says the CPU time its calls took; every real run its process tree's; each
        # recording run's measuring replay the CPU time of its calls by group.
        replays = [r for r in measured["records"] if r["kind"] == "replay"]
        # (A replay of a millisecond on tmpfs is all CPU, and the scheduler's CPU clock and the
        # wall clock part by tens of microseconds over it.  The CPU time is the workers' own:
        # with the progress thread's, a 1.1 ms replay once told 1.4 ms of it.)
        assert all(0 < r["calls_cpu_s"] < r["seconds"] * 1.05 + 200e-6 for r in replays), [
            (r["program"], r["target"], r["calls_cpu_s"], r["seconds"]) for r in replays]
        # Every replay, timed or measuring, ran each call as traced, and the doc says so.
        assert all(r["mismatches"] == 0 for r in replays) and all(r["calls_cpu_mismatches"] == 0 for r in recordings)
        assert f"Timed replays with calls that ended otherwise than traced: 0 of {len(replays)}." in text
        assert all(r["user_cpu_s"] + r["system_cpu_s"] > 0 for r in measured["records"] if r["kind"] == "real")
        groups = ("metadata", "read", "write", "sync")
        assert all(r[f"calls_cpu_{g}_ns"] >= 0 for r in recordings for g in groups)
        # ... scaled to add up to the calls' CPU of a replay without the brackets, each's count kept.
        assert all(abs(sum(r[f"calls_cpu_{g}_ns"] for g in groups) - r["calls_cpu_unbracketed_ns"]) <= len(groups)
                   and r["calls_cpu_bracketed_ns"] > 0 for r in recordings)
        assert "calls' CPU, bracketed / unbracketed (median ms over the rounds" in text
        # The recording before the rounds measured its calls' CPU too (--replay-in), as its profile keeps it.
        assert all(f"untraced_calls_cpu_{g}_ns" in p["profile"]["recording"] for p in measured["programs"] for g in groups)
        # Each round's recording also ran cold with the syncs skipped, and its measuring replay skipped them.
        assert all(r["calls_cpu_syncs_skipped"] is True for r in recordings)
        assert all(r["nosync_user_cpu_ns"] + r["nosync_system_cpu_ns"] > 0 for r in recordings)
        # Each target's cost table measured (once here: a quick fsbench of a disk filesystem is
        # a minute, and where repeated tables go is test_cost_tables_are_measured_spread_over_
        # the_rounds), judged as the per-case median of its measurements, and kept in the store.
        assert {name: len(runs) for name, runs in measured["cost_table_runs"].items()} == {"val-ext4": 1, "val-tmpfs": 1}
        # ... at the effort asked for (--table-reps, --table-case-seconds), which the measurements keep.
        assert measured["options"]["table_effort"] == dict(zip(("reps", "case_seconds"), QUICK_TABLE_EFFORT))
        assert quick_table_efforts(fsbm_home) == {QUICK_TABLE_EFFORT}
        judged_table = CostTable.from_json(measured["cost_tables"]["val-ext4"])
        assert judged_table.entry("read", "random", "cold", 4096).repeats.count == 1
        with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
            (_, _, result), = store.documents("validation")
            assert [name for _, name, _ in store.document_names("runtime_model")] == ["recorded"]
            assert len(store.documents("cost_table", name="val-ext4")) == 1
        # The verdict starts from the CPU time measured in the rounds; the recording's is judged beside it.
        assert result["summary"]["cpu"] == "in the rounds"
        assert set(result["summary"]["variants"]) == {CPU_IN_ROUNDS, CPU_IN_ROUNDS_BRACKETED, CPU_IN_ROUNDS_PRICED,
                                                      CPU_IN_ROUNDS_WARM, CPU_BEFORE}
        # The verdict scales fsbench's CPU prices of each group on every target by the calls'
        # CPU those replays measured (median over the rounds); priced, they are fsbench's.
        verdict = features(measured, 1 << 30, CPU_IN_ROUNDS)
        sqlite_rows = verdict[verdict["program"] == "sqlite"]
        scales = sqlite_rows["cpu_scales"].iloc[0]
        assert all(s == scales for s in sqlite_rows["cpu_scales"]) and set(scales) == set(groups)
        assert all(0.5 <= scales[g] <= 2.0 for g in ("metadata", "read", "write")) and scales["sync"] >= 0
        priced = features(measured, 1 << 30, CPU_IN_ROUNDS_PRICED)
        assert all(set(s.values()) == {1.0} for s in priced["cpu_scales"])
        # Its time outside is the CPU time of the rounds' runs without syncs less its calls' so
        # priced (none of them syncs), where the measurement was taken whole (no group's scale
        # at a bound); the syncs' scale is what skipping them saved the cold runs.
        sqlite_runs = [r for r in recordings if r["program"] == "sqlite"]
        whole = sum(median_cpu(sqlite_runs, "nosync_user_cpu_ns", "nosync_system_cpu_ns"))  # the median run's
        measured_calls = sum(statistics.median(r[f"calls_cpu_{g}_ns"] for r in sqlite_runs) for g in groups[:3])
        saved = sum(median_cpu(sqlite_runs, "user_cpu_ns", "system_cpu_ns")) - whole
        sqlite_profile = next(p["profile"] for p in measured["programs"] if p["name"] == "sqlite")
        traced_syncs = price_workload(sqlite_profile, Pricer(judged_table), cache_bytes=1 << 30).by_group(cpu=True)["sync"]
        assert scales["sync"] == pytest.approx(max(saved, 0) / traced_syncs, rel=1e-3, abs=1e-9)
        if all(0.5 < scales[g] < 2.0 for g in groups[:3]):
            outside_cpu = sqlite_rows["user_cpu_s"].iloc[0] + sqlite_rows["system_cpu_s"].iloc[0]
            assert outside_cpu == pytest.approx(max(whole - measured_calls, 0) / 1e9, abs=1e-5)
        assert "| before the rounds | raw |" in text
        # The form adopted by the rule of test_a_calibrated_form_is_adopted_only_where_it_is_no_worse_anywhere.
        forms = result["summary"]["variants"]["in the rounds"]
        assert result["summary"]["adopted"] == _adopted_form(forms["raw"], forms["calibrated"])
        # The CPU time of the rounds' cold runs, as for a cold prediction (its user time whole
        # where the calls' CPU is priced); the wait, the pairs' median bounded.
        grep_runs = [r for r in recordings if r["program"] == "grep"]
        grep_user = median_cpu(grep_runs, "user_cpu_ns", "system_cpu_ns")[0] / 1e9
        assert list(priced[priced["program"] == "grep"]["user_cpu_s"]) == pytest.approx([grep_user] * 2, abs=1e-9)
        # Judged beside it: the same rounds' runs with every file read in, and the same wait.
        warm = features(measured, 1 << 30, CPU_IN_ROUNDS_WARM)
        grep_warm_user = median_cpu(grep_runs, "warm_user_cpu_ns", "warm_system_cpu_ns")[0] / 1e9
        assert list(warm[warm["program"] == "grep"]["user_cpu_s"]) == pytest.approx([grep_warm_user] * 2, abs=1e-9)
        grep_wait = bounded_wait_ns([r["outside_wait_ns"] for r in grep_runs], [r["outside_read_ns"] for r in grep_runs]) / 1e9
        assert all(r["outside_wait_s"] == pytest.approx(grep_wait, abs=1e-9) for r in result["rows"]
                   if r["program"] == "grep")
        assert list(warm[warm["program"] == "grep"]["outside_wait_s"]) == pytest.approx([grep_wait] * 2, abs=1e-9)
        rows = {(r["program"], r["candidate"]): r for r in result["rows"]}
        sqlite_ext4, sqlite_tmpfs = rows[("sqlite", "ext4 fresh")], rows[("sqlite", "tmpfs fresh")]
        # fsync-bound: memory is far faster, and the model, fitted without sqlite, says so.
        assert sqlite_tmpfs["real_s"] < sqlite_ext4["real_s"] / 1.15
        assert sqlite_tmpfs["predicted_s"] < sqlite_ext4["predicted_s"]
        # Each largest miss is split into the filesystem's part and the outside part.
        section = text.split("## Largest misses")[1].split("\n## ")[0]
        misses = [line for line in section.splitlines() if line.startswith("- ")]
        assert misses and all(". Filesystem: modelled " in line and ". Outside: predicted " in line for line in misses)
        again = run_fsbm("validate", "--from", str(tmp_path / "m.json"), "--doc", str(tmp_path / "again.md"))
        assert again.returncode == 0, again.stderr
        # A document says when its runs were measured, and when stored runs were judged again.
        assert text.splitlines()[2].startswith("Regenerated by `fsbm validate --set dev` on ")
        assert "judged again on " in (tmp_path / "again.md").read_text().splitlines()[2]
        # The same measurements judged as a held-out set: by the model the development set
        # stored, every program at once, and no model fitted or stored on them.
        held = {**measured, "options": {**measured["options"], "split": "test"}}
        (tmp_path / "held.json").write_text(json.dumps(held))
        with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
            models_before = store.document_names("runtime_model")
        done = run_fsbm("validate", "--from", str(tmp_path / "held.json"), "--doc", str(tmp_path / "held.md"))
        assert done.returncode == 0, done.stderr
        held_text = (tmp_path / "held.md").read_text()
        assert "# Validation of recordings: the test set" in held_text and "leave-one-program-out" not in held_text
        assert "90% intervals covering the measured runtime: absolute form | " in held_text
        with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
            assert store.document_names("runtime_model") == models_before
            stored = RuntimeEstimator.from_json(store.document(models_before[0][0], "runtime_model")[2])
        judged = judge(held, 1 << 30, model=stored)
        assert judged.summary["held_out"] and judged.model is stored
        assert judged.summary["intervals"] == len(judged.rows) and 0 <= judged.summary["covered"] <= len(judged.rows)
        # The overview judges the newest stored measurements of each validation again, side by
        # side, and says which were never measured.
        overview = run_fsbm("validate", "--overview", "--doc", str(tmp_path / "overview.md"))
        assert overview.returncode == 0, overview.stderr
        page = (tmp_path / "overview.md").read_text()
        assert "| dev | recording (`fsbm trace record`), absolute |" in page
        assert "- recordings of the test set (`fsbm validate --set test`)" in page
        assert "- plain traces of the dev set (`fsbm validate --plain --set dev`)" in page
    finally:
        for name in ("val-ext4", "val-tmpfs"):
            run_fsbm("fs", "destroy", name)


def test_a_log_without_call_durations_keeps_its_syncs_modelled_time() -> None:
    """A log without -T's time outside holds its file calls' time, so their modelled time on the
    traced candidate comes off it; where the parser left the gaps after syncs out of it, the
    syncs' modelled time stays in, or they would come off twice."""
    from fsbm.documents import Timeline
    from fsbm.predictor.model import FsTime, Line
    from fsbm.predictor.outside import Outside
    from fsbm.predictor.predict import _less_file_calls
    from fsbm.predictor.pricing import Price

    def line(op: str, count: int, ns: float) -> Line:
        return Line(op, "sync" if op == "fsync" else "write", op, count, Price(ns, ns, ns, "test"))

    times = [FsTime("ext4", (line("write", 100, 50_000), line("fsync", 10, 2_000_000)))]
    outside = Outside.exactly(0.5, "untimed", "the gaps")
    apart = _less_file_calls(outside, ["ext4"], times, "ext4", 1.0, Timeline(untimed_sync_gaps=10), None)
    assert apart.seconds == pytest.approx(0.5 - 0.005) and "but its syncs'" in apart.evidence
    together = _less_file_calls(outside, ["ext4"], times, "ext4", 1.0, Timeline(), None)
    assert together.seconds == pytest.approx(0.5 - 0.025)


def test_a_log_without_call_durations_takes_off_only_the_calls_its_gaps_hold() -> None:
    """Two processes at once without -T: the log split 60 of 100 writes in two, so their
    durations are shown and no gap holds them, and only the other 40 writes' modelled time comes
    off the gaps; an in-kernel copy is counted among the writes, and what was read through a
    mapping lies in the gaps whole.  Taking all of it off took the split calls' time twice."""
    from fsbm.documents import Timeline
    from fsbm.predictor.model import FsTime, Line
    from fsbm.predictor.outside import Outside
    from fsbm.predictor.predict import _less_file_calls
    from fsbm.predictor.pricing import Price

    def line(op: str, count: int, ns: float) -> Line:
        return Line(op, "write", op, count, Price(ns, ns, ns, "test"))

    timeline = Timeline(file_calls_by_op={"write": (100, 40)})
    times = [FsTime("ext4", (line("write", 100, 100_000), line("copy", 10, 1_000_000), line("mmap", 1, 2_000_000)))]
    told = _less_file_calls(Outside.exactly(0.5, "untimed", "the gaps"), ["ext4"], times, "ext4", 1.0, timeline, None)
    assert told.seconds == pytest.approx(0.5 - 0.4 * 0.010 - 0.4 * 0.010 - 0.002)
    assert "of it: the log split the other calls in two" in told.evidence


def test_a_log_without_call_durations_takes_off_only_what_its_gaps_medians_did_not() -> None:
    """1,000 preads without -T, each gap's median 80 us where a bare gap took 60 us: 20 us of
    each read is in the median already.  Priced at 30 us a read, 10 us each comes off the gaps;
    at 10 us, nothing (the median held more than the model prices).  Cold reads of 500 us sat
    over a median capped at 140 us, which held 80 us of each: 420 us each comes off."""
    from fsbm.documents import UNTIMED_CAPS_NS, Timeline
    from fsbm.predictor.model import FsTime, Line
    from fsbm.predictor.outside import Outside
    from fsbm.predictor.predict import _less_file_calls
    from fsbm.predictor.pricing import Price

    def told(median_us: int, priced_us: float) -> Outside:
        timeline = Timeline(file_calls_by_op={"read": (1000, 1000)}, untimed_bare_gap_us=[0] * 60 + [100] + [0] * 195,
                            untimed_held_by_op={"read": [1000, *(1000 * min(median_us * 1000, cap) for cap in UNTIMED_CAPS_NS)]})
        times = [FsTime("ext4", (Line("read", "read", "read", 1000, Price(priced_us * 1e3, priced_us * 1e3,
                                                                        priced_us * 1e3, "test")),))]
        return _less_file_calls(Outside.exactly(1.0, "untimed", "the gaps"), ["ext4"], times, "ext4", 1.0, timeline,
                                None)  # no calibration: the parser's own cap, 140 us

    assert told(80, 30).seconds == pytest.approx(1.0 - 1000 * (30 - 19.5) * 1e-6)  # the bare gap's bin: 60.5 us
    assert "0.019 s of it its gaps' medians took off already" in told(80, 30).evidence
    assert told(80, 10).seconds == pytest.approx(1.0)
    assert told(500, 500).seconds == pytest.approx(1.0 - 1000 * (500 - 79.5) * 1e-6)


def test_a_captures_server_handling_beyond_the_modelled_calls_stays_on_every_candidate() -> None:
    """A capture's calls were outstanding 0.30 s beyond the server's floor where it was taken,
    and the cost model prices them at 0.10 s there: the other 0.20 s is the NFS server's own
    handling, the same whichever filesystem it exports, so it joins the time outside; a model
    that prices them above what the capture saw takes the difference off, never below 0."""
    from fsbm.documents import Timeline
    from fsbm.predictor.model import FsTime, Line
    from fsbm.predictor.outside import Outside
    from fsbm.predictor.predict import _with_server_handling
    from fsbm.predictor.pricing import Price

    def fs(candidate: str, seconds: float) -> FsTime:
        return FsTime(candidate, (Line("write", "write", "write", 100, Price(seconds * 1e7, seconds * 1e7,
                                                                           seconds * 1e7, "test")),))

    timeline = Timeline(processes=1, calls=100, timed_calls=100, span_ns=10**9, file_calls_signed_ns=300_000_000)
    outside = Outside.within(0.5, (-0.5, 0.5), "capture", "the clients' time")
    times = [fs("ext4", 0.10), fs("xfs", 0.40)]
    more = _with_server_handling(outside, timeline, ["ext4", "xfs"], times, "ext4", 1.0)
    assert more.seconds == pytest.approx(0.70) and more.low == pytest.approx(outside.low + 0.20)
    assert "the server's own handling of the calls, 0.200 s" in more.evidence and "val" not in more.evidence
    less = _with_server_handling(outside, timeline, ["ext4", "xfs"], times, "xfs", 1.0)
    assert less.seconds == pytest.approx(0.40) and "above what the capture saw" in less.evidence
    over = _with_server_handling(Outside.exactly(0.05, "capture", "x"), timeline, ["xfs"], [times[1]], "xfs", 1.0)
    assert over.seconds == 0.0

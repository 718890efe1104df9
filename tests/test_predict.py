"""Prediction end to end: a real program recorded with `fsbm trace record --scope`, real
cost tables from fsbench, and `fsbm predict` as a user runs them (`fsbm validate`: test_validate.py)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from pathlib import Path

import pyarrow.compute as pc

import pytest

from fsbm.api.render import format_seconds
from fsbm.characterizer.characterize import characterize_files
from fsbm.errors import FsbmError, UsageError
from fsbm.predictor.outside import outside_features
from fsbm.traces.outside_files import UsedFiles, bounded_wait_ns
from fsbm.store import ResultsStore
from fsbm.traces.ingest import ingest, read_events
from fsbm.traces.record import outside_wait_pair, record
from tests.conftest import QUICK_BENCH_FLAGS, Calibrated, give_calibration, run_fsbm, strace_tt


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
@pytest.mark.slow(seconds=90)
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

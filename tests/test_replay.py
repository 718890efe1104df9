"""fsreplay on real traced programs and on hostile traces: what ran, how errors compare with
the trace, and that nothing outside the target changes whatever the trace says."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from fsbm.microbench.replay import fsreplay_binary, mismatches, run_replay
from fsbm.microbench.scratch import ScratchFs
from fsbm.traces.ingest import ingest, read_events
from fsbm.traces.record import (CALLS_CPU_BRACKETED, CALLS_CPU_CALLS, CALLS_CPU_MISMATCHES, CALLS_CPU_NAMES,
                                CALLS_CPU_SYNCS_SKIPPED, CALLS_CPU_UNBRACKETED, as_bracketed, clean_replays, record,
                                replay_calls_cpu, scaled_to_total)
from fsbm.traces.replay_plan import build_plan, write_plan
from fsbm.traces.schema import EVENT_SCHEMA
from tests.conftest import SHARED_DATA, require_root, run_fsbm

def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every entry beneath root: its kind and content hash (or link text), and mode."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            if p.is_symlink():
                content = "link:" + os.readlink(p)
            elif p.is_file():
                content = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                content = "dir"
            out[str(p.relative_to(root))] = (content, st.st_mode)
    return out


@pytest.mark.parametrize("mode", ["serial", "threads", "timed"])
def test_a_traced_workload_replays_with_the_errors_it_had(traced: Path, tmp_path: Path, fsbm_home: Path,
                                                          mode: str) -> None:
    target = tmp_path / "target"
    target.mkdir()
    out = tmp_path / "replay.json"
    done = run_fsbm("replay", str(traced), "--target", str(target), "--mode", mode, "--json", str(out))
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["operations_run"] == doc["planned_operations"] > 500 and not doc["interrupted"]
    ops = doc["operations"]
    # The workload's own operations, each replayed: 30 files created by tar, 31 removed by rm.
    assert ops["unlink"]["count"] >= 31 and ops["rename"]["count"] == 1 and ops["rmdir"]["count"] >= 1
    # Everything that failed traced (the dynamic loader probing paths) failed alike; nothing else did.
    assert ops["open"]["errors"]["failed_as_traced"] > 10
    assert doc["mismatches"] == [], doc["mismatches"]
    # The end state is the traced one: src removed again.
    work = target / str(traced.parent / "work").lstrip("/")
    assert (work / "src.tar").is_file() and not (work / "src").exists()
    if mode == "timed":
        assert doc["think_time"]["slept_ns"] > 0


def test_timed_mode_keeps_the_traced_think_time(tmp_path: Path) -> None:
    program = tmp_path / "slow.py"
    program.write_text(textwrap.dedent("""
        import os, time
        for i in range(8):
            with open(f"f{i}", "w") as f:
                f.write("x" * 4096)
            time.sleep(0.15)
            os.stat(f"f{i}")
    """))
    recording = record([sys.executable, str(program)], tmp_path / "slow.strace", cwd=tmp_path)
    ingest([recording.log], tmp_path / "slow.parquet")
    table = read_events(tmp_path / "slow.parquet")
    mine = table.filter(pa.array([str(f).startswith(str(tmp_path) + "/f") for f in table["file"].to_pylist()]))
    write_plan(mine, tmp_path / "plan")
    runtimes = {}
    for mode in ("serial", "timed"):
        target = tmp_path / mode
        target.mkdir()
        done = subprocess.run([str(fsreplay_binary()), "--plan", str(tmp_path / "plan"), "--target", str(target),
                               "--mode", mode], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        runtimes[mode] = json.loads(done.stdout)["runtime_ns"]
    traced_ns = max(mine["ts"].to_pylist()) - min(mine["ts"].to_pylist())
    assert runtimes["serial"] < 0.1 * traced_ns
    assert abs(runtimes["timed"] - traced_ns) / traced_ns < 0.05, (runtimes, traced_ns)


def _events(rows: list[tuple[str, str, str | None, int | None]], origs: list[str] | None = None) -> pa.Table:
    """(op, path, path2, errno) rows by one actor, as the strace parser writes them (each
    call named as its operation unless `origs` names them)."""
    n = len(rows)
    return pa.table({
        "seq": list(range(n)), "ts": [None] * n, "dur": [None] * n, "actor": ["1"] * n,
        "op": [r[0] for r in rows], "orig": origs or [r[0] for r in rows], "file": [r[1] for r in rows],
        "path": [r[1] for r in rows], "path2": [r[2] for r in rows], "offset": [0 if r[0] == "write" else None
                                                                               for r in rows],
        "size": [64 if r[0] == "write" else None for r in rows], "ret": [64 if r[0] == "write" else 0 for r in rows],
        "errno": [r[3] for r in rows], "record": list(range(n)),
    }).cast(EVENT_SCHEMA)


def test_a_strace_name_that_looks_like_a_file_handle_keeps_its_place() -> None:
    """Only NFS events name files by handle ("0x" and a hash): a workload's directory "2024"
    and its file must stay where the trace had them, or the file's create finds no parent."""
    events = _events([("mkdir", "/w/2024", None, None), ("create", "/w/2024/notes", None, None),
                      ("write", "/w/2024/notes", None, None), ("unlink", "/w/cafe", None, None)])
    text, _ = build_plan(events, scope="/w")
    ops = [line.split("\t") for line in text.splitlines() if line.startswith("O\t")]
    assert [(f[2], f[12]) for f in ops] == [("mkdir", "2024"), ("open", "2024/notes"), ("write", "2024/notes"),
                                           ("unlink", "cafe")]


def _replayed_beneath(tmp_path: Path, opened: str, stated: str) -> Path:
    """Replay a log that opens and reads `opened`, then stats `stated` and "../outside",
    into a fresh target; the target."""
    log = tmp_path / "names.strace"
    log.write_text(f'100 1700000000.000001 openat(AT_FDCWD, "{opened}", O_RDONLY) = 3 <0.000010>\n'
                   '100 1700000000.000002 read(3, "abc", 4096) = 3 <0.000005>\n'
                   f'100 1700000000.000003 stat("{stated}", {{}}) = 0 <0.000005>\n'
                   '100 1700000000.000004 close(3) = 0 <0.000001>\n'
                   '100 1700000000.000005 stat("../outside", {}) = -1 ENOENT (No such file) <0.000005>\n')
    target = tmp_path / "target"
    target.mkdir()
    done = run_fsbm("replay", str(log), "--target", str(target))
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "outside").exists()
    return target


def test_a_path_with_repeated_slashes_replays_as_the_kernel_took_it(tmp_path: Path, fsbm_home: Path) -> None:
    # Issue 38: "/usr/lib//libfoo.so" aborted the replay, with a garbled error and a half-built tree.
    target = _replayed_beneath(tmp_path, "/usr/lib//libfoo.so", "/usr/./lib/libfoo.so")
    assert (target / "usr" / "lib" / "libfoo.so").is_file()


def test_a_path_that_climbs_back_down_replays_as_the_kernel_took_it(tmp_path: Path, fsbm_home: Path) -> None:
    # gcc names its files "lib/../lib/crt1.o": the tree got an entry "lib/.." and the replay
    # of a real gcc log (the shared data's cmatthew_gcc.txt) stopped at "Is a directory".
    target = _replayed_beneath(tmp_path, "/usr/lib/gcc/../../lib/crt1.o", "/usr/lib/crt1.o")
    assert (target / "usr" / "lib" / "crt1.o").is_file()
    (tmp_path / "gcc").mkdir()
    gcc = run_fsbm("replay", str(SHARED_DATA / "strace" / "cmatthew_gcc.txt"), "--target", str(tmp_path / "gcc"))
    assert gcc.returncode == 0, gcc.stderr


def test_a_copy_from_outside_the_scope_is_replayed_as_a_write() -> None:
    """Outside the scope the source was on another filesystem: the kernel read and wrote it
    there, and a copy beneath the target could clone what the program never could."""
    events = _events([("open", "/w/src", None, None), ("create", "/w/one", None, None),
                      ("write", "/w/one", "/w/src", None), ("create", "/w/two", None, None),
                      ("write", "/w/two", "/elsewhere/src", None)],
                     origs=["openat", "openat", "copy_file_range", "openat", "copy_file_range"])
    text, _ = build_plan(events, scope="/w")
    ops = [line.split("\t") for line in text.splitlines() if line.startswith("O\t")]
    assert [(f[2], f[12], f[13]) for f in ops if f[2] in ("copy", "write")] == [("copy", "one", "src"), ("write", "two", "")]
    copy = next(f for f in ops if f[2] == "copy")
    assert next(f[12] for f in ops if f[2] == "open" and f[3] == copy[4]) == "src"


@pytest.mark.parametrize("walk", [False, True], ids=["openat2", "openat-walk"])
def test_hostile_traces_change_nothing_outside_the_target(tmp_path: Path, walk: bool) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("keep me")
    (outside / "dir").mkdir()
    target = tmp_path / "target"
    target.mkdir()
    escape_rel = os.path.relpath(outside, target)  # "../outside"
    long_name = "n" * 300
    rows = [
        ("create", f"{escape_rel}/planted", None, None),            # ../ out of the target
        ("write", f"{escape_rel}/planted", None, None),
        ("unlink", f"{escape_rel}/precious", None, None),
        ("rmdir", f"{escape_rel}/dir", None, None),
        ("symlink", "/inside/link", str(outside), None),             # planted mid-trace, pointing out
        ("create", "/inside/link/evil", None, None),                 # through it
        ("write", "/inside/link/evil", None, None),
        ("unlink", "/inside/link/precious", None, None),
        ("setattr", "/inside/link/precious", None, None),
        ("rename", "/inside/link/precious", "/inside/stolen", None),
        ("symlink", "/inside/up", "../../..", None),
        ("create", "/inside/up/" + str(outside).lstrip("/") + "/evil2", None, None),
        ("create", "/inside/" + long_name, None, "ENAMETOOLONG"),    # a name too long
        ("mkdir", "/inside/" + "/".join(["d" * 200] * 30), None, None),  # a path too long
    ]
    table = _events(rows)
    plan = tmp_path / "plan"
    text, _ = build_plan(table)
    # Absolute paths the plan builder would have made relative, written in by hand.
    text += f"O\t0\tunlink\t-1\t0\t0\t-1\t0\t0\t0\t-1\t1\t{outside}/precious\t\n"
    text += f"O\t0\trename\t-1\t0\t0\t-1\t0\t0\t0\t-1\t1\tinside/x\t{outside}/y\n"
    plan.write_text(text)
    before = snapshot(outside)
    command = [str(fsreplay_binary()), "--plan", str(plan), "--target", str(target), "--allow-nonempty"]
    done = subprocess.run(command + (["--no-openat2"] if walk else []), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert snapshot(outside) == before
    assert (outside / "precious").read_text() == "keep me"
    refusals = ("EXDEV", "ELOOP", "ENOTDIR", "ENAMETOOLONG", "ENOENT")
    refused = [m for m in doc["mismatches"] if m["replayed"] in refusals]
    assert len(refused) >= 8, [(m["kind"], m["path"][:40], m["replayed"]) for m in doc["mismatches"]]
    # The planted symlink itself is an entry beneath the target, as traced.
    assert (target / "inside" / "link").is_symlink(), doc["mismatches"]


def test_a_mapped_file_is_replayed_as_a_read_through_of_its_region(tmp_path: Path) -> None:
    """The trace shows only the mmap of a file read through page faults; the plan keeps the
    region, makes the file that large, and fsreplay maps it and touches every page."""
    (tmp_path / "input.bin").write_bytes(os.urandom(3 << 20))
    program = tmp_path / "hash.py"
    program.write_text(textwrap.dedent("""
        import hashlib, mmap, os
        fd = os.open("input.bin", os.O_RDONLY)
        with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as whole, mmap.mmap(fd, 1 << 20, prot=mmap.PROT_READ,
                                                                         offset=1 << 20) as middle:
            hashlib.sha256(whole).hexdigest(), hashlib.sha256(middle).hexdigest()
        os.close(fd)
    """))
    recording = record([sys.executable, str(program)], tmp_path / "hash.strace", cwd=tmp_path)
    assert recording.returncode == 0
    ingest([recording.log], tmp_path / "hash.parquet")
    stats = write_plan(read_events(tmp_path / "hash.parquet"), tmp_path / "plan", scope=str(tmp_path))
    mapped = [line.split("\t") for line in (tmp_path / "plan").read_text().splitlines() if "\tmmap\t" in line]
    assert [(int(f[6]), int(f[7])) for f in mapped] == [(0, 3 << 20), (1 << 20, 1 << 20)]
    assert "F\t%d\tinput.bin" % (3 << 20) in (tmp_path / "plan").read_text()
    assert stats.skipped.get("mmap (not replayed)", 0) == 0
    target = tmp_path / "target"
    target.mkdir()
    done = subprocess.run([str(fsreplay_binary()), "--plan", str(tmp_path / "plan"), "--target", str(target)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["operations"]["mmap"]["count"] == 2 and report["mismatches"] == []


def test_cp_is_replayed_as_the_copy_it_made_and_clones_on_xfs(tmp_path: Path, xfs_fs: ScratchFs) -> None:
    """cp copies in the kernel (copy_file_range); the event names its source, the plan copies
    from the source's handle, and on xfs the replayed copy shares the source's extents, as
    the traced one did, where a write of the bytes would have written 4 MiB anew."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "big.bin").write_bytes(os.urandom(4 << 20))
    recording = record(["cp", "big.bin", "copy.bin"], tmp_path / "cp.strace", cwd=work)
    assert recording.returncode == 0
    ingest([recording.log], tmp_path / "cp.parquet")
    events = read_events(tmp_path / "cp.parquet").to_pandas()
    copies = events[events["orig"] == "copy_file_range"]
    assert len(copies) >= 1 and set(copies["path2"]) == {str(work / "big.bin")}
    assert copies["ret"].sum() == 4 << 20
    write_plan(read_events(tmp_path / "cp.parquet"), tmp_path / "plan", scope=str(work))
    lines = [line.split("\t") for line in (tmp_path / "plan").read_text().splitlines()]
    opened = {int(f[3]): f[12] for f in lines if f[0] == "O" and f[2] == "open"}
    copied = [f for f in lines if f[0] == "O" and f[2] == "copy"]
    assert copied and all((opened[int(f[3])], opened[int(f[4])]) == ("copy.bin", "big.bin") for f in copied)
    assert ["F", str(4 << 20), "big.bin"] in lines
    target = xfs_fs.mount_point / "replay"
    target.mkdir()
    done = subprocess.run([str(fsreplay_binary()), "--plan", str(tmp_path / "plan"), "--target", str(target)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["operations"]["copy"]["count"] == len(copied) and report["mismatches"] == []
    assert (target / "copy.bin").read_bytes() == (target / "big.bin").read_bytes()
    extents = subprocess.run(["filefrag", "-v", str(target / "copy.bin")], capture_output=True, text=True, check=True)
    assert "shared" in extents.stdout, extents.stdout


def test_rsync_replays_its_probes_for_directories_and_its_links_as_traced(tmp_path: Path) -> None:
    """rsync opens every entry it copies with O_DIRECTORY first, and a file fails that "not a
    directory".  The trace keeps the failure, not the flag; the plan asks for a directory
    again, so the replayed opens fail as the traced ones did, where they would open the file.
    A symbolic link in the tree it copies is read (readlink); the plan makes it, with the
    text the trace read, so its readlink ends as traced too."""
    work = tmp_path / "work"
    (work / "tree" / "sub").mkdir(parents=True)
    for i in range(12):
        (work / "tree" / ("sub" if i % 2 else "") / f"f{i}").write_bytes(os.urandom(100 + i))
    # rsync makes this link in the mirror before the directory it names, then lstats it; the
    # trace keeps no AT_SYMLINK_NOFOLLOW, and the plan replays that stat of a link as an lstat.
    (work / "tree" / "zz").symlink_to("sub")
    recording = record(["rsync", "-a", "tree/", "mirror/"], tmp_path / "rsync.strace", cwd=work)
    assert recording.returncode == 0
    ingest([recording.log], tmp_path / "rsync.parquet")
    events = read_events(tmp_path / "rsync.parquet").to_pandas()
    probes = events[(events["op"] == "open") & (events["errno"] == "ENOTDIR")]
    assert len(probes) >= 12  # each file, at least once
    write_plan(read_events(tmp_path / "rsync.parquet"), tmp_path / "plan", scope=str(work))
    assert "L\tsub\ttree/zz" in (tmp_path / "plan").read_text().splitlines()
    target, report = _replay_plan_text(tmp_path, (tmp_path / "plan").read_text())
    assert mismatches(report) == 0, report["mismatches"]
    assert report["operations"]["open"]["errors"]["failed_as_traced"] >= len(probes)
    assert report["operations"]["readlink"]["count"] >= 1 and report["tree"]["links"] == 1
    assert os.readlink(target / "tree" / "zz") == "sub"


def _replay_plan_text(tmp_path: Path, text: str) -> tuple[Path, dict]:
    """Replay a plan's text with fsreplay into a new, empty target: the target and the report."""
    plan = tmp_path / "plan"
    plan.write_text(text)
    target = tmp_path / "target"
    target.mkdir()
    done = subprocess.run([str(fsreplay_binary()), "--plan", str(plan), "--target", str(target)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return target, json.loads(done.stdout)


def test_a_mapping_past_the_end_of_its_file_touches_only_the_file(tmp_path: Path) -> None:
    """A plan may map more than the file holds (a mapping's length is rounded, a file may have
    shrunk): touching past the end would be SIGBUS, so the region is cut at the file's end."""
    _, report = _replay_plan_text(tmp_path, "fsbm-replay-plan\t1\nactors\t1\nhandles\t1\nmaxio\t4096\n"
                                  "F\t10000\tsmall\n"
                                  "O\t0\topen\t0\t0\t0\t-1\t0\t0\t0\t-1\t1\tsmall\t\n"
                                  "O\t0\tmmap\t0\t0\t0\t0\t16777216\t0\t0\t-1\t1\tsmall\t\n"
                                  "O\t0\tmmap\t0\t0\t0\t20480\t4096\t0\t0\t-1\t1\tsmall\t\n")
    assert report["operations"]["mmap"]["count"] == 2 and report["mismatches"] == []


def _refused_plan(tmp_path: Path, text: str) -> str:
    """fsreplay's complaint about a plan it must refuse (exit 2) before running anything."""
    plan = tmp_path / "plan"
    plan.write_text(text)
    done = subprocess.run([str(fsreplay_binary()), "--plan", str(plan), "--target", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 2
    return done.stderr


def test_a_bad_plan_names_its_line(tmp_path: Path) -> None:
    head = "fsbm-replay-plan\t1\nactors\t1\nhandles\t1\nmaxio\t4096\n"
    plan = tmp_path / "plan"
    assert f"{plan}:5: unknown operation kind" in _refused_plan(
        tmp_path, head + "O\t0\tfrobnicate\t-1\t0\t0\t-1\t0\t0\t0\t-1\t1\tx\t\n")
    assert f"{plan}:5: a copy names its destination's handle and, in flags, its source's" in _refused_plan(
        tmp_path, head + "O\t0\tcopy\t0\t7\t0\t-1\t10\t0\t0\t-1\t1\tx\ty\n")
    assert f"{plan}:5: an L line is: L<tab>target<tab>path, the target not empty" in _refused_plan(
        tmp_path, head + "L\t\tlink\n")


def test_replay_refuses_a_target_that_is_not_empty(traced: Path, tmp_path: Path, fsbm_home: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "mine").write_text("user data")
    done = run_fsbm("replay", str(traced), "--target", str(target))
    assert done.returncode == 2 and "not empty" in done.stderr and "Traceback" not in done.stderr
    assert (target / "mine").read_text() == "user data" and len(list(target.iterdir())) == 1


def test_a_measuring_replay_whose_calls_failed_is_counted_and_left_out(tmp_path: Path) -> None:
    """The replays that measure a trace's calls' CPU time (fsbm trace record --replay-in,
    fsbm validate) keep how many calls ended otherwise than traced, and of how many; one
    where more than 1 in 1000 did measured other work, so the median leaves it out."""
    rows = [("mkdir", "/inside", None, None), ("create", "/inside/kept", None, None),
            ("write", "/inside/kept", None, None), ("stat", "/inside/kept", None, None)]
    plans = {}
    for name, extra in (("clean", []), ("failing", [("create", "/inside/" + "n" * 300, None, None)])):
        text, _ = build_plan(_events(rows + extra))  # traced as made; a name that long cannot be
        plans[name] = tmp_path / f"{name}.plan"
        plans[name].write_text(text)
    base = tmp_path / "replays"
    base.mkdir()
    clean, failing = (replay_calls_cpu(plans[name], base) for name in ("clean", "failing"))
    assert clean[CALLS_CPU_MISMATCHES] == 0 and failing[CALLS_CPU_MISMATCHES] == 1
    assert clean_replays([clean, failing]) == [clean] and not any(base.iterdir())
    # One call in a thousand may have ended otherwise: it moved the CPU time by its own cost.
    assert failing[CALLS_CPU_CALLS] == len(rows) + 1
    assert clean_replays([{**failing, CALLS_CPU_CALLS: 1000}, {**failing, CALLS_CPU_CALLS: 999}]) == [
        {**failing, CALLS_CPU_CALLS: 1000}]


def test_a_measuring_replay_can_skip_the_syncs_as_the_runs_without_them_do(tmp_path: Path, ext4_fs) -> None:
    """fsbm trace record --replay-in also replays the calls with their syncs skipped
    (traces/nosync.py), as its cold runs without syncs ran: on a disk, 40 rewrites each made
    durable cost their syncs' CPU time with the syncs, next to none without, and the
    replay says which it did."""
    rows = [("mkdir", "/inside", None, None), ("create", "/inside/kept", None, None)]
    rows += [row for _ in range(40) for row in (("write", "/inside/kept", None, None),
                                                 ("fsync", "/inside/kept", None, None))]
    text, _ = build_plan(_events(rows))
    plan = tmp_path / "syncs.plan"
    plan.write_text(text)
    base = ext4_fs.mount_point / "replays"
    base.mkdir()
    kept, skipped = (replay_calls_cpu(plan, base, without_syncs=without) for without in (False, True))
    assert (kept[CALLS_CPU_SYNCS_SKIPPED], skipped[CALLS_CPU_SYNCS_SKIPPED]) == (False, True)
    assert kept[CALLS_CPU_MISMATCHES] == skipped[CALLS_CPU_MISMATCHES] == 0
    assert kept["calls_cpu_sync_ns"] > 40 * 2_000 and skipped["calls_cpu_sync_ns"] < kept["calls_cpu_sync_ns"] / 4
    assert not any(base.iterdir())


def test_scaling_to_a_total_keeps_each_groups_share() -> None:
    assert scaled_to_total({"metadata": 30, "read": 10, "write": 0, "sync": 0}, 20) == {
        "metadata": 15, "read": 5, "write": 0, "sync": 0}
    # Nothing counted, no share known: nothing is made up.
    assert scaled_to_total({"metadata": 0, "read": 0}, 50) == {"metadata": 0, "read": 0}


def test_a_measuring_replays_groups_add_up_to_its_calls_cpu_without_brackets(tmp_path: Path, ext4_fs) -> None:
    """The calls' CPU by group comes from a replay that brackets every call with the CPU
    clock, whose brackets cost more after a call that blocked than their warm estimate: the
    groups keep its shares and add up to the total of a replay of the same calls without
    brackets.  Both totals are kept, and as_bracketed gives back the groups as counted."""
    rows = [("mkdir", "/inside", None, None)]
    rows += [row for i in range(30) for row in (("create", f"/inside/f{i}", None, None),
                                                 ("write", f"/inside/f{i}", None, None),
                                                 ("fsync", f"/inside/f{i}", None, None),
                                                 ("stat", f"/inside/f{i}", None, None))]
    text, _ = build_plan(_events(rows))
    plan = tmp_path / "mixed.plan"
    plan.write_text(text)
    base = ext4_fs.mount_point / "replays"
    base.mkdir()
    facts = replay_calls_cpu(plan, base)
    groups = {group: facts[name] for group, name in CALLS_CPU_NAMES.items()}
    assert facts[CALLS_CPU_MISMATCHES] == 0 and facts[CALLS_CPU_BRACKETED] > 0 and facts[CALLS_CPU_UNBRACKETED] > 0
    assert abs(sum(groups.values()) - facts[CALLS_CPU_UNBRACKETED]) <= len(groups)  # each group rounded
    counted = as_bracketed(facts)
    assert abs(sum(counted[name] for name in CALLS_CPU_NAMES.values()) - facts[CALLS_CPU_BRACKETED]) <= len(groups)
    for group, name in CALLS_CPU_NAMES.items():
        assert counted[name] / facts[CALLS_CPU_BRACKETED] == pytest.approx(
            groups[group] / facts[CALLS_CPU_UNBRACKETED], abs=1e-3)
    assert groups["metadata"] > 0 and groups["write"] > 0 and groups["sync"] > 0
    # Facts measured before both totals were kept were the brackets' counts, and stay so.
    older = {name: facts[name] for name in CALLS_CPU_NAMES.values()}
    assert as_bracketed(older) == older
    assert not any(base.iterdir())


def test_a_cold_replay_that_skips_the_syncs_still_reads_its_tree_cold(tmp_path: Path, ext4_fs) -> None:
    """fsreplay --skip-syncs skips the plan's syncs, not its own: the tree it built is written
    back before --cold drops the caches, so its reads come off the device.  (Replayed under
    libeatmydata instead, the tree's writeback was skipped and its dirty pages stayed cached:
    the measuring replays of validation run 26 read warm, and put the reads' CPU at half
    fsbench's cold prices.)"""
    n, size = 64, 256 << 10
    events = pa.table({
        "seq": list(range(n)), "ts": [None] * n, "dur": [None] * n, "actor": ["1"] * n, "op": ["read"] * n,
        "orig": ["read"] * n, "file": [f"/inside/f{i}" for i in range(n)], "path": [f"/inside/f{i}" for i in range(n)],
        "path2": [None] * n, "offset": [0] * n, "size": [size] * n, "ret": [size] * n, "errno": [None] * n,
        "record": list(range(n)),
    }).cast(EVENT_SCHEMA)
    text, _ = build_plan(events)
    plan = tmp_path / "reads.plan"
    plan.write_text(text)

    def read_ns(**how: bool) -> int:
        target = ext4_fs.mount_point / f"replay-{len(list(ext4_fs.mount_point.iterdir()))}"
        target.mkdir()
        report = run_replay(plan, target, **how)
        assert report["operations"]["read"]["errors"]["failed_unexpectedly"] == 0
        return report["operations"]["read"]["latency_ns"]["total"]

    # Three of each, interleaved, the quickest of each compared: a stall of the shared host
    # during one replay (a warm one once took 26 ms, its cold partner 23) says nothing of
    # where the reads came from.
    warm, cold = [], []
    for _ in range(3):
        warm.append(read_ns())
        cold.append(read_ns(cold=True, skip_syncs=True))
    assert min(cold) > 3 * min(warm), (cold, warm)


def test_a_directory_named_with_a_trailing_slash_replays_as_traced(tmp_path: Path) -> None:
    """git init makes "tree/.git/" and "tree/.git/hooks/": the same directories as without
    the slash, so the replay makes them and everything beneath them as traced (before, 52
    of git-commit's calls failed in every replay)."""
    rows = [("mkdir", "/inside/", None, None), ("mkdir", "/inside/", None, "EEXIST"),
            ("mkdir", "/inside/hooks/", None, None), ("create", "/inside/hooks/a.sample", None, None),
            ("write", "/inside/hooks/a.sample", None, None), ("stat", "/inside/hooks/", None, None),
            ("rmdir", "/inside/gone/", None, "ENOENT")]
    target, report = _replay_plan_text(tmp_path, build_plan(_events(rows))[0])
    assert report["mismatches"] == [] and report["operations_run"] == len(rows)
    assert (target / "inside" / "hooks" / "a.sample").stat().st_size == 64


def test_files_read_with_a_large_buffer_are_replayed_at_the_size_they_had(tmp_path: Path) -> None:
    """grep asks for 96 KiB or more of every file; the tree a replay starts from holds each
    file at the size its reads returned, not the size they asked for (a 5 KiB source made a
    144 KiB file had grep's cold replay read 3.7 times its bytes and run 1.6 times grep)."""
    work = tmp_path / "work"
    work.mkdir()
    sizes = {"small.py": 5218, "empty.py": 0, "one-buffer.py": 98304, "several.py": 300_000}
    for name, size in sizes.items():
        (work / name).write_bytes((b"import os\n" * (size // 10 + 1))[:size])
    recording = record(["grep", "-r", "-c", "-e", "import", "."], tmp_path / "grep.strace", cwd=work)
    assert recording.returncode == 0
    events = ingest([recording.log], tmp_path / "events.parquet").output
    text, _ = build_plan(read_events(events), scope=str(work))
    tree = {f[2]: int(f[1]) for f in (line.split("\t") for line in text.splitlines()) if f[0] == "F"}
    assert tree == sizes
    target, report = _replay_plan_text(tmp_path, text)
    assert report["mismatches"] == []
    assert {name: (target / name).stat().st_size for name in sizes} == sizes


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs with room for 8 inodes, mounted beneath tmp_path."""
    require_root()
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,nr_inodes=8", "tmpfs", str(mount)], check=True)
    try:
        (mount / "target").mkdir()
        yield mount / "target"
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_tree_larger_than_the_free_space_is_refused_before_anything_is_written(
        small_tmpfs: Path, tmp_path: Path, fsbm_home: Path) -> None:
    # Issue 38: a pread at 2 MB wrote the whole file, whatever room there was.
    log = tmp_path / "big.strace"
    log.write_text('100 1700000000.000001 openat(AT_FDCWD, "/d/big", O_RDONLY) = 3 <0.000010>\n'
                   '100 1700000000.000002 pread64(3, "abc", 4096, 2000000) = 4096 <0.000005>\n')
    done = run_fsbm("replay", str(log), "--target", str(small_tmpfs))
    assert done.returncode == 2 and "need 1.9 MiB" in done.stderr and "free" in done.stderr
    assert not any(small_tmpfs.iterdir())


def test_a_replay_that_fails_part_way_says_why_and_leaves_nothing_behind(
        small_tmpfs: Path, tmp_path: Path, fsbm_home: Path) -> None:
    # Issue 38: a tree that could not be built gave "fsreplay wrote unreadable results" (its
    # report cut off) and left the partial tree.  Twenty files do not fit in 8 inodes.
    log = tmp_path / "many.strace"
    log.write_text("".join(f'100 1700000000.0000{i:02d} stat("/d/f{i}", {{}}) = 0 <0.000005>\n' for i in range(20)))
    done = run_fsbm("replay", str(log), "--target", str(small_tmpfs))
    assert done.returncode == 1, done.stderr
    assert "unreadable" not in done.stderr and "No space left on device" in done.stderr
    assert "was removed" in done.stderr and not any(small_tmpfs.iterdir())


def test_a_replay_on_a_scratch_filesystem_runs_in_a_directory_of_its_own(
        tmpfs_fs: ScratchFs, tmp_path: Path, fsbm_home: Path) -> None:
    # Issue 38: `--fs` replayed into the mount's root and left the tree there, so a second
    # replay on the same filesystem was refused as "not empty".
    log = tmp_path / "w.strace"
    log.write_text('100 1700000000.000001 openat(AT_FDCWD, "/d/a", O_RDONLY) = 3 <0.000010>\n'
                   '100 1700000000.000002 read(3, "abc", 4096) = 3 <0.000005>\n')
    before = set(tmpfs_fs.mount_point.iterdir())
    for _ in range(2):
        done = run_fsbm("replay", str(log), "--fs", tmpfs_fs.name)
        assert done.returncode == 0, done.stderr
    assert set(tmpfs_fs.mount_point.iterdir()) == before
    kept = run_fsbm("replay", str(log), "--fs", tmpfs_fs.name, "--keep-tree")
    assert kept.returncode == 0, kept.stderr
    made = set(tmpfs_fs.mount_point.iterdir()) - before
    assert len(made) == 1 and next(iter(made)).name.startswith("fsbm-replay-")
    assert (next(iter(made)) / "d" / "a").is_file()


def test_paths_of_two_thousand_components_replay_in_linear_time(tmp_path: Path, fsbm_home: Path) -> None:
    # Issue 38: making each directory resolved its whole prefix again, so an 8-line trace of
    # 2,000-component paths took 211 s.  Step by step it is milliseconds; the time limit only
    # stops a return to the quadratic walk from hanging the suite.
    deep = "/" + "/".join(["d"] * 2000)
    log = tmp_path / "deep.strace"
    log.write_text("".join(f'100 1700000000.00000{i} stat("{deep}/f{i}", {{}}) = 0 <0.000005>\n' for i in range(8)))
    (tmp_path / "target").mkdir()
    try:
        done = run_fsbm("replay", str(log), "--target", str(tmp_path / "target"), timeout=60)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "target" / deep.lstrip("/") / "f7").is_file()
    finally:  # rm walks a deep tree without recursing; pytest's own cleanup would overflow Python's stack
        subprocess.run(["rm", "-rf", str(tmp_path / "target")], check=True)


def test_a_replay_stops_when_fsbm_is_killed(tmp_path: Path, fsbm_home: Path) -> None:
    # Issue 38: after a SIGKILL of fsbm, which no handler sees, fsreplay ran on, orphaned.
    # The kernel now sends it SIGTERM when fsbm dies (PR_SET_PDEATHSIG).
    import signal
    import subprocess
    import sys
    import time

    # Timed mode keeps the trace's think time: ten writes 30 s apart replay for minutes, and
    # between two of them fsreplay writes no progress line that a dead reader would end it on.
    log = tmp_path / "long.strace"
    with log.open("w") as f:
        f.write('100 1700000000.000001 openat(AT_FDCWD, "/d/a", O_RDWR) = 3 <0.000010>\n')
        for i in range(10):
            f.write(f'100 {1700000001 + 30 * i}.000000 pwrite64(3, "x", 4096, 0) = 4096 <0.000005>\n')
    (tmp_path / "target").mkdir()
    proc = subprocess.Popen([str(Path(sys.executable).parent / "fsbm"), "replay", str(log), "--target",
                             str(tmp_path / "target"), "--mode", "timed"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def replaying() -> list[str]:
        found = subprocess.run(["pgrep", "-f", f"fsreplay.*{tmp_path / 'target'}"], capture_output=True, text=True)
        return found.stdout.split()

    deadline = time.monotonic() + 120
    while not replaying() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert replaying(), "fsreplay never started"
    time.sleep(1)  # past the first write: the next is 30 s away
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while replaying() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert replaying() == []

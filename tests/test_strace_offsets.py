"""A real program, traced for real: every read and write carries the offset the kernel used.

The program's offsets are known by construction, so the parser's fd tables (dup, fork
inheritance, O_APPEND, lseek, pread/pwrite) are checked against the kernel's semantics.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from fsbm.traces.ingest import ingest, read_events
from fsbm.traces.record import record

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

PROGRAM = textwrap.dedent("""
    import os
    fd = os.open("a.dat", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, b"x" * 1000)          # 0
    os.write(fd, b"y" * 500)           # 1000
    os.lseek(fd, 100, os.SEEK_SET)
    os.write(fd, b"z" * 10)            # 100
    fd2 = os.dup(fd)
    os.write(fd2, b"w" * 10)           # 110: a dup shares the offset
    os.pwrite(fd, b"p" * 20, 5000)     # 5000: positional, the offset stays 120
    os.write(fd, b"q" * 5)             # 120
    pid = os.fork()
    if pid == 0:
        os.write(fd, b"c" * 7)         # 125: the child inherits the description
        os._exit(0)
    os.waitpid(pid, 0)
    os.write(fd, b"after")             # 132: the child moved the shared offset
    os.close(fd)
    os.close(fd2)
    a = os.open("b.log", os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
    os.write(a, b"1" * 10)             # 0: appending to an empty file
    os.write(a, b"2" * 10)             # 10
    os.close(a)
    r = os.open("a.dat", os.O_RDONLY)
    os.read(r, 4096)                   # 0
    os.read(r, 4096)                   # 4096 requested at 4096... the file is 5020 bytes
    os.close(r)
    s = os.open("b.log", os.O_RDONLY)
    c = os.open("c.copy", os.O_CREAT | os.O_WRONLY, 0o644)
    os.copy_file_range(s, c, 12)       # b.log's 0..12 to c.copy's 0, in the kernel
    os.read(s, 100)                    # 12: the copy moved the source's offset
    os.close(s)
    os.close(c)
    os.mkdir("d")
    os.rename("a.dat", "d/a2.dat")
    os.unlink("d/a2.dat")
    os.rmdir("d")
""")


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    work = tmp_path_factory.mktemp("traced")
    (work / "program.py").write_text(PROGRAM)
    recording = record([sys.executable, "program.py"], work / "trace.strace", cwd=work)
    assert recording.returncode == 0
    ingest([recording.log], work / "events.parquet")
    frame = read_events(work / "events.parquet").to_pandas()
    return frame[frame["file"].str.startswith(str(work)) & ~frame["file"].str.endswith(".py")]


def writes_to(events: pd.DataFrame, name: str) -> list[tuple[int, int]]:
    rows = events[(events["op"] == "write") & events["file"].str.endswith("/" + name)]
    return [(int(o), int(s)) for o, s in zip(rows["offset"], rows["size"])]


def test_sequential_writes_lseek_dup_and_pwrite_carry_kernel_offsets(events: pd.DataFrame) -> None:
    assert writes_to(events, "a.dat") == [(0, 1000), (1000, 500), (100, 10), (110, 10), (5000, 20), (120, 5),
                                          (125, 7), (132, 5)]


def test_the_forked_child_is_its_own_actor(events: pd.DataFrame) -> None:
    child_writes = events[(events["op"] == "write") & (events["size"] == 7)]
    parent_writes = events[(events["op"] == "write") & (events["size"] == 1000)]
    assert child_writes["actor"].iloc[0] != parent_writes["actor"].iloc[0]


# strace -f prints a call when it ends, so a child that runs before its parent's clone returns
# has its first lines printed before "<... clone resumed> = PID" says whose child it is: here the
# child writes through the descriptor it inherited, and lseeks it, before the parent learns its pid.
CHILD_FIRST = """\
100 10:00:00.000100 openat(AT_FDCWD, "/w/a.dat", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3 <0.000010>
100 10:00:00.000200 write(3, "x"..., 1000) = 1000 <0.000010>
100 10:00:00.000300 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD <unfinished ...>
101 10:00:00.000350 write(3, "c"..., 7) = 7 <0.000010>
101 10:00:00.000370 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD <unfinished ...>
102 10:00:00.000380 write(3, "g"..., 3) = 3 <0.000010>
101 10:00:00.000390 <... clone resumed>, child_tidptr=0x7f00) = 102 <0.000020>
101 10:00:00.000400 lseek(3, 0, SEEK_CUR) = 1010 <0.000005>
100 10:00:00.000410 <... clone resumed>, child_tidptr=0x7f00) = 101 <0.000110>
101 10:00:00.000420 +++ exited with 0 +++
102 10:00:00.000430 +++ exited with 0 +++
100 10:00:00.000500 write(3, "after", 5) = 5 <0.000010>
"""


# The same, as strace -f prints it to its standard error: no pid while one process is traced,
# "[pid N] " once there are two, so the first pid printed is the child's.
CHILD_FIRST_UNPREFIXED = "".join(
    line.split(" ", 1)[1] + "\n" if i < 3 else f"[pid {line.split(' ', 1)[0]}] {line.split(' ', 1)[1]}\n"
    for i, line in enumerate(CHILD_FIRST.splitlines()))


@pytest.mark.parametrize("text", [CHILD_FIRST, CHILD_FIRST_UNPREFIXED], ids=["pid-columns", "pid-prefixes"])
def test_a_child_that_runs_before_its_clone_returns_inherits_its_parents_descriptors(text: str, tmp_path: Path) -> None:
    log = tmp_path / "child-first.strace"
    log.write_text(text)
    events = read_events(ingest([log], tmp_path / "e.parquet").output).to_pandas()
    writes = events[events["op"] == "write"].sort_values("ts")
    assert [(f, int(o), int(n)) for f, o, n in zip(writes["file"], writes["offset"], writes["size"])] == [
        ("/w/a.dat", 0, 1000), ("/w/a.dat", 1000, 7), ("/w/a.dat", 1007, 3), ("/w/a.dat", 1010, 5)]
    assert [str(a) for a in writes["actor"]][1:3] == ["101", "102"]


def test_o_append_writes_land_at_the_end(events: pd.DataFrame) -> None:
    assert writes_to(events, "b.log") == [(0, 10), (10, 10)]


def test_reads_advance_the_offset_by_what_was_read(events: pd.DataFrame) -> None:
    reads = events[(events["op"] == "read") & events["file"].str.endswith("/a.dat")]
    assert list(zip(reads["offset"], reads["size"], reads["ret"])) == [(0, 4096, 4096), (4096, 4096, 924)]


def test_an_in_kernel_copy_names_its_source_and_moves_its_offset(events: pd.DataFrame) -> None:
    copy = events[events["orig"] == "copy_file_range"]
    assert len(copy) == 1 and copy.iloc[0]["path2"].endswith("/b.log") and copy.iloc[0]["file"].endswith("/c.copy")
    assert (copy.iloc[0]["offset"], copy.iloc[0]["ret"]) == (0, 12)
    reads = events[(events["op"] == "read") & events["file"].str.endswith("/b.log")]
    assert list(zip(reads["offset"], reads["size"], reads["ret"])) == [(12, 100, 8)]


def test_namespace_operations_are_in_the_vocabulary(events: pd.DataFrame) -> None:
    ops = list(events[events["op"].isin(["create", "mkdir", "rename", "unlink", "rmdir"])]["op"])
    assert ops == ["create", "create", "create", "mkdir", "rename", "unlink", "rmdir"]
    rename = events[events["op"] == "rename"].iloc[0]
    assert rename["path"].endswith("/a.dat") and rename["path2"].endswith("/d/a2.dat")


def test_timestamps_are_epoch_and_durations_known(events: pd.DataFrame) -> None:
    assert events["ts"].notna().all() and events["dur"].notna().all()
    assert events["ts"].min() > 1_600_000_000 * 10**9
    assert (events["ts"].diff().dropna() >= 0).all()


THREADS_AND_FORK = textwrap.dedent("""
    import os, threading
    box = {}
    t = threading.Thread(target=lambda: box.update(fd=os.open("shared.dat", os.O_CREAT | os.O_RDWR, 0o644)))
    t.start(); t.join()
    os.write(box["fd"], b"t" * 100)     # main thread, fd opened by another thread: 0
    pid = os.fork()
    if pid == 0:
        os.write(box["fd"], b"c" * 50)  # child, from its own per-pid log: 100
        os._exit(0)
    os.waitpid(pid, 0)
    os.write(box["fd"], b"p" * 10)      # 150
""")


def test_per_pid_logs_and_threads_sharing_descriptors(tmp_path: Path) -> None:
    """strace -ff writes LOG.<pid>; threads share the fd table (CLONE_FILES), a fork copies it."""
    import subprocess

    (tmp_path / "program.py").write_text(THREADS_AND_FORK)
    subprocess.run(["strace", "-ff", "-ttt", "-o", str(tmp_path / "log"), sys.executable, "program.py"],
                   cwd=tmp_path, check=True, capture_output=True)
    logs = sorted(tmp_path.glob("log.*"))
    assert len(logs) >= 3  # main thread, helper thread, child
    ingest(logs, tmp_path / "e.parquet")
    events = read_events(tmp_path / "e.parquet").to_pandas()
    writes = events[(events["op"] == "write") & events["file"].str.endswith("shared.dat")]
    assert [(int(s), int(o)) for s, o in zip(writes["size"], writes["offset"])] == [(100, 0), (50, 100), (10, 150)]
    assert writes["actor"].nunique() == 2  # the main thread, then the forked child


def test_every_time_setting_call_of_a_real_cp_a_is_an_event(tmp_path: Path) -> None:
    # Issue 38: utimensat(fd, NULL, times, 0) is futimens, how cp -a and tar set a file's
    # times; 852 of 8,787 such calls became events.  Counted against the log's own lines.
    source = tmp_path / "src" / "d"
    source.mkdir(parents=True)
    for i in range(40):
        (source / f"f{i}").write_text(str(i))
    log = tmp_path / "cpa.strace"
    subprocess.run(["strace", "-f", "-tt", "-T", "-y", "-o", str(log), "cp", "-a", "src", "dst"], cwd=tmp_path,
                   check=True)
    in_log = sum(1 for line in log.read_text().splitlines() if " utimensat(" in line and "= 0" in line)
    events = read_events(ingest([log], tmp_path / "e.parquet").output).to_pandas()
    set_times = events[events["orig"] == "utimensat"]
    assert in_log >= 41 and len(set_times) == in_log
    assert set(set_times["op"]) == {"setattr"} and set_times["file"].str.startswith(str(tmp_path / "dst")).all()


# The order strace -f printed on a busy CI host: the child's write starts before its
# parent's clone returns and ends after; strace writes the space before the marker.
CHILD_BEFORE_ITS_CLONE_RETURNS = textwrap.dedent("""\
    100 1700000000.000100 openat(AT_FDCWD</w>, "/w/a.dat", O_WRONLY|O_CREAT, 0644) = 3</w/a.dat> <0.000020>
    100 1700000000.000200 write(3</w/a.dat>, "qqqqq", 5) = 5 <0.000010>
    100 1700000000.000300 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD <unfinished ...>
    101 1700000000.000400 write(3</w/a.dat>, "ccccccc", 7 <unfinished ...>
    100 1700000000.000500 <... clone resumed>, child_tidptr=0x7f0) = 101 <0.000200>
    101 1700000000.000600 <... write resumed>) = 7 <0.000200>
    100 1700000000.000700 wait4(101,  <unfinished ...>
    101 1700000000.000800 exit_group(0)   = ?
    101 1700000000.000900 +++ exited with 0 +++
    100 1700000000.001000 <... wait4 resumed>[{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 101 <0.000300>
    100 1700000000.001100 pwrite64(3</w/a.dat>, "pp", 2, 9000 <unfinished ...>
    100 1700000000.001200 <... pwrite64 resumed> )             = 2 <0.000010>
    100 1700000000.001300 write(3</w/a.dat>, "after", 5) = 5 <0.000010>
""")


def test_a_call_strace_left_unfinished_keeps_its_last_argument(tmp_path: Path) -> None:
    """Glued to its resumed half, an unfinished write keeps its size and a pwrite its offset,
    whichever of strace's spacings the halves carry; the child's write, begun before its
    clone returned, still moves the offset it shares with its parent."""
    log = tmp_path / "race.strace"
    log.write_text(CHILD_BEFORE_ITS_CLONE_RETURNS)
    events = read_events(ingest([log], tmp_path / "e.parquet").output).to_pandas()
    writes = events[events["op"] == "write"]
    assert [(int(a), int(o), int(s)) for a, o, s in zip(writes["actor"], writes["offset"], writes["size"])] == \
        [(100, 0, 5), (101, 5, 7), (100, 9000, 2), (100, 12, 5)]

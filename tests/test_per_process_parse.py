"""strace -ff logs parsed a process group at a time, in parallel (traces/per_process.py).

Real programs are traced for real with strace -ff.  The parallel parse must give the table
the one-process parse gives, column for column and footer for footer; where processes
share a descriptor across a fork, the offsets must be the kernel's, which the file's final
size shows.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import run_fsbm
from fsbm.traces.errors import TraceParseError
from fsbm.traces.ingest import ingest
from fsbm.traces.per_process import ProcessGroupsReader, process_tree

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

# A shell opens a file inside the trace, then its forked children and itself write to it at
# once: every write's offset depends on writes in other processes' logs.  The children copy
# with dd (read and write): the kernel serializes writes to one open file description, but
# not copy_file_range, which cat uses, so two cats at once may land on one offset (2 runs of
# 30 here lost a cat's 1,092 bytes).  The cat after the wait copies with no one beside it.
SHELL = textwrap.dedent("""
    exec 3> shared.log
    echo start >&3
    seq 1 300 > small
    for i in 1 2 3 4; do
      ( for j in 1 2 3; do echo "child $i $j" >&3; dd if=small status=none >&3; done ) &
    done
    echo middle >&3
    wait
    cat small small >&3
    echo end >&3
""")

# Threads share the fd table (one process group); a fork starts a group of its own.
THREADS = textwrap.dedent("""
    import os, threading
    fd = os.open("threads.dat", os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
    def work(n):
        own = os.open(f"t{n}.dat", os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(own, b"x" * (n + 1) * 100)
        os.write(fd, b"s" * 10)
        box[n] = own
    box = {}
    threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    for t in threads: t.start()
    for t in threads: t.join()
    os.write(box[0], b"main writes a thread's fd")
    pid = os.fork()
    if pid == 0:
        os.write(fd, b"c" * 50)
        os._exit(0)
    os.waitpid(pid, 0)
    os.write(fd, b"p" * 7)
""")


def traced(tmp: Path, *command: str, flags: tuple[str, ...] = ("-tt", "-T", "-y")) -> list[Path]:
    subprocess.run(["strace", "-ff", *flags, "-o", str(tmp / "log"), *command], cwd=tmp, check=True,
                   capture_output=True, timeout=120)
    return sorted(tmp.glob("log.*"))


def both_ways(logs: list[Path], out: Path, workers: object) -> tuple[pq.ParquetFile, pq.ParquetFile]:
    one = ingest(logs, out / "one.parquet", force=True)
    parallel = ingest(logs, out / "parallel.parquet", force=True, workers=workers)
    assert parallel.events == one.events > 0
    return pq.ParquetFile(one.output), pq.ParquetFile(parallel.output)


@pytest.fixture(scope="module")
def shell_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("shell")
    (tmp / "work.sh").write_text(SHELL)
    return traced(tmp, "sh", "work.sh")


def test_shared_offsets_across_forks_equal_one_parse_and_the_kernel(shell_logs: list[Path], tmp_path: Path) -> None:
    with ThreadPoolExecutor(2) as pool:
        one, parallel = both_ways(shell_logs, tmp_path, pool)
    assert parallel.read().equals(one.read())
    assert parallel.schema_arrow.metadata == one.schema_arrow.metadata  # counts and timeline too
    shared_writes_follow_the_kernel(parallel, shell_logs[0].parent / "shared.log")


def test_an_ff_runs_second_reading_is_its_logs_without_call_durations(shell_logs: list[Path], tmp_path: Path) -> None:
    # Parsed a process group at a time, the timeline's reading without durations adds up as
    # the timeline does, over the run's span: the same logs stripped of -T give it.
    from fsbm.documents import Timeline
    from fsbm.traces.ingest import timeline_of
    from fsbm.traces.strace import without_call_durations

    stripped = tmp_path / "stripped"
    stripped.mkdir()
    for log in shell_logs:
        (stripped / log.name).write_bytes(without_call_durations(log.read_bytes()))
    with ThreadPoolExecutor(2) as pool:
        timed = Timeline.of(timeline_of(ingest(shell_logs, tmp_path / "timed.parquet", workers=pool).output))
        untimed = Timeline.of(timeline_of(ingest(sorted(stripped.iterdir()), tmp_path / "untimed.parquet",
                                                 workers=pool).output))
    assert timed.timed and untimed.untimed is None and untimed.untimed_gaps > 0
    assert timed.untimed == untimed


def test_the_join_takes_the_events_a_slice_at_a_time(shell_logs: list[Path], tmp_path: Path) -> None:
    one = pq.read_table(ingest(shell_logs, tmp_path / "one.parquet").output)
    with ThreadPoolExecutor(2) as pool:
        reader = ProcessGroupsReader(shell_logs, pool, rows_at_once=97)  # slices cut the replayed offsets too
        batches = list(reader.batches())
    assert len(batches) > 10
    assert pa.Table.from_batches(batches).equals(one)


def test_a_fork_starts_a_group_after_its_parent_and_threads_share_one(tmp_path: Path) -> None:
    (tmp_path / "threads.py").write_text(THREADS)
    logs = traced(tmp_path, sys.executable, "threads.py")
    with tempfile.TemporaryDirectory() as work:
        tree = process_tree(logs, Path(work))
    assert len(logs) == 5 and len(tree.groups) == 2  # main + 3 threads; the forked child
    first, child = tree.groups
    assert len(first.logs) == 4 and first.parent is None
    assert child.logs == (tmp_path / f"log.{child.root}",) and child.parent == first.number
    with ThreadPoolExecutor(2) as pool:
        one, parallel = both_ways(logs, tmp_path, pool)
    assert parallel.read().equals(one.read())
    writes = parallel.read().to_pandas().query("op == 'write' and file.str.endswith('/threads.dat')")
    assert list(zip(writes["offset"], writes["ret"])) == [(0, 10), (10, 10), (20, 10), (30, 50), (80, 7)]


def shared_writes_follow_the_kernel(table: pq.ParquetFile, written: Path) -> None:
    """Each write to `written` lands where one before it ended, the last at the file's size."""
    events = table.read().to_pandas()
    writes = events[events["file"].str.endswith(f"/{written.name}") & events["ret"].gt(0)
                    & events["op"].eq("write")].sort_values("offset")
    assert writes["actor"].nunique() >= 5  # the shell and its four children
    ends = (writes["offset"] + writes["ret"]).tolist()
    assert writes["offset"].tolist() == [0, *ends[:-1]]
    assert ends[-1] == written.stat().st_size


def test_logs_without_timestamps_are_ordered_by_their_fork_tree(tmp_path: Path) -> None:
    # Logs without times give no order between processes: read as one stream, a child's
    # first lines could come before the fork that made it, when it had no descriptors yet.
    # Parsed a group at a time, every child starts from its fork.  (Which of two processes
    # wrote first to a shared file stays unknown, so its offsets are not the kernel's.)
    (tmp_path / "work.sh").write_text(SHELL)
    logs = traced(tmp_path, "sh", "work.sh", flags=())
    with ThreadPoolExecutor(2) as pool:
        one, parallel = both_ways(logs, tmp_path, pool)
    assert parallel.read().equals(one.read())
    events = one.read().to_pandas()
    writes = events[events["orig"].eq("write") & events["actor"].ne(str(tree_root(logs)))]
    assert (writes["file"] == "shared.log").sum() >= 12  # not "?fd=3/pid=N": the fork told them
    assert not writes["file"].str.startswith("?fd=").any()


def tree_root(logs: list[Path]) -> int:
    return min(int(log.suffix[1:]) for log in logs)


def test_on_a_dask_cluster_from_the_command_line(shell_logs: list[Path], tmp_path: Path) -> None:
    one = ingest(shell_logs, tmp_path / "one.parquet")
    done = run_fsbm("trace", "parse", *map(str, shell_logs), "-o", str(tmp_path / "dask.parquet"),
                    "--dask-workers", "2")
    assert done.returncode == 0, done.stderr
    assert f"{one.events} events" in done.stdout
    assert pq.read_table(tmp_path / "dask.parquet").equals(pq.read_table(one.output))


def test_on_a_scheduler_started_apart(shell_logs: list[Path], tmp_path: Path, scheduler_apart: str) -> None:
    one = ingest(shell_logs, tmp_path / "one.parquet")
    done = run_fsbm("trace", "parse", *map(str, shell_logs), "-o", str(tmp_path / "apart.parquet"),
                    "--dask", scheduler_apart)
    assert done.returncode == 0, done.stderr
    assert pq.read_table(tmp_path / "apart.parquet").equals(pq.read_table(one.output))


def test_a_bad_line_names_its_own_log_and_line_and_leaves_nothing(shell_logs: list[Path], tmp_path: Path) -> None:
    logs = []
    for log in shell_logs:
        (tmp_path / log.name).write_bytes(log.read_bytes())
        logs.append(tmp_path / log.name)
    bad = logs[2]
    lines = bad.read_text().splitlines(keepends=True)
    lines[4] = "this is not strace output\n"
    bad.write_text("".join(lines))
    scratch = set(Path(tempfile.gettempdir()).glob("fsbm-strace-ff-*"))
    with ThreadPoolExecutor(2) as pool:
        for workers in (None, pool):
            with pytest.raises(TraceParseError) as caught:
                ingest(logs, tmp_path / "out.parquet", workers=workers)
            assert (caught.value.path, caught.value.position) == (bad.resolve(), 5)
            assert not (tmp_path / "out.parquet").exists()
        assert set(Path(tempfile.gettempdir()).glob("fsbm-strace-ff-*")) == scratch
        assert not list(tmp_path.glob(".fsbm-*"))  # the workers' scratch, beside the output
        kept = ingest(logs, tmp_path / "kept.parquet", keep_going=True, workers=pool)
    assert kept.stats.bad_lines == 1 and kept.stats.first_errors[0].startswith(f"{bad.resolve()}:5: ")
    assert run_fsbm("trace", "parse", *map(str, logs), "-o", str(tmp_path / "x.parquet"), "--jobs", "2",
                    "--dask-workers", "2").returncode == 2


def test_characterize_takes_an_ff_run_as_one_trace(shell_logs: list[Path], tmp_path: Path) -> None:
    # Characterized one log at a time, each child's writes through the descriptor it inherited
    # would start at 0 and look sequential (on one such run, 82% of writes against 39%).
    import json

    import fsbm

    table = ingest(shell_logs, tmp_path / "events.parquet").output
    from_table = fsbm.characterize(table).body
    from_logs = fsbm.characterize(shell_logs).body
    assert from_logs.pop("source").endswith(f"log.* ({len(shell_logs)} per-process logs)")
    from_table.pop("source")
    assert from_logs == from_table
    done = run_fsbm("characterize", *map(str, shell_logs), "--json", str(tmp_path / "p.json"),
                    env={"FSBM_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    on_cli = json.loads((tmp_path / "p.json").read_text())
    assert on_cli["tang"] == from_table["tang"]


@pytest.mark.slow(seconds=11)
def test_predict_and_report_take_one_workload(shell_logs: list[Path], tmp_path: Path) -> None:
    other = tmp_path / "other.strace"
    other.write_text("1700000000.000000 close(3) = 0\n")
    done = run_fsbm("predict", str(shell_logs[0]), str(other), "--candidates", "ext4",
                    env={"FSBM_HOME": str(tmp_path / "home")})
    assert done.returncode == 2 and "give one workload, not 2" in done.stderr and "Traceback" not in done.stderr
    done = run_fsbm("report", *map(str, shell_logs), "-o", str(tmp_path / "w.html"),
                    env={"FSBM_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    assert "per-process logs" in done.stdout and (tmp_path / "w.html").stat().st_size > 10_000
    # The logs of one -ff run are one workload: it goes on to look for the cost table.
    done = run_fsbm("predict", *map(str, shell_logs), "--candidates", "nosuch", env={"FSBM_HOME": str(tmp_path / "home")})
    assert done.returncode == 2 and "no cost table for 'nosuch'" in done.stderr


def test_a_parallel_make_build_parses_the_same_both_ways(tmp_path: Path) -> None:
    # make -j2 of nine C files: make, its shells, cc, cc1, as and ld, forked and exec'd in
    # parallel, each writing the build log through descriptors the shell opened.
    for i in range(8):
        (tmp_path / f"f{i}.c").write_text(f"int f{i}(void) {{ return {i}; }}\n")
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "Makefile").write_text("OBJS = $(patsubst %.c,%.o,$(wildcard *.c))\n"
                                       "prog: $(OBJS)\n\tcc -o $@ $^ >> build.log 2>&1\n"
                                       "%.o: %.c\n\tcc -O1 -c $< -o $@ && echo built $@ >> build.log\n")
    logs = traced(tmp_path, "make", "-j2")
    assert len(logs) > 20
    with ThreadPoolExecutor(2) as pool:
        one, parallel = both_ways(logs, tmp_path, pool)
    assert parallel.read().equals(one.read())
    assert parallel.schema_arrow.metadata == one.schema_arrow.metadata
    events = one.read().to_pandas()
    assert events["file"].str.endswith("/prog").any() and events["actor"].nunique() > 20

"""Shared fixtures.  Tests that need root or loop devices fail (never skip) under CI=true."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tarfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from fsbm.cluster import cluster_apart
from fsbm.microbench import scratch
from fsbm.microbench.fsbench import fsbench_binary
from fsbm.store import ResultsStore
from fsbm.traces.ingest import IngestResult, ingest
from fsbm.traces.record import record

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM ends the run as Ctrl-C does: pytest then tears down the running test's
    fixtures, so its scratch filesystems are unmounted and their loop devices detached.
    (Left to the default, SIGTERM kills pytest with every finalizer unrun.)"""
    signal.signal(signal.SIGTERM, _terminated)


def slow_seconds(item: pytest.Item) -> float:
    """What `@pytest.mark.slow(seconds=N)` says a test takes of a worker (0 unmarked)."""
    marker = item.get_closest_marker("slow")
    return float(marker.kwargs.get("seconds", 0)) if marker else 0.0


# The files whose tests take the session's `served` store (below): `make test` hands them to one
# worker together, so that the store (two quick tables and a recording, half a minute) is made once.
SERVED_STORE_FILES = frozenset({"tests/test_api.py", "tests/test_report.py", "tests/test_pipeline.py",
                                "tests/test_tracing.py"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files whose slow tests add up to the most seconds first, each file's own order kept.
    `make test` hands whole files to two workers in this order (--no-loadscope-reorder): a
    long file handed out last runs alone while the other worker waits (the validation's
    100 s once did), where handed out first it runs beside the many short ones.  A file that
    takes the served store and is not in SERVED_STORE_FILES is refused, before any test runs,
    where pytest runs in one process (a refusal in a worker of xdist's would end it with no
    word of why; `make test`'s first half runs in one process and sees every test): it
    would make the store again on another worker."""
    weight: Counter[Path] = Counter()
    for item in items:
        weight[item.path] += slow_seconds(item)
        where = item.path.relative_to(REPO).as_posix()
        if ("served" in getattr(item, "fixturenames", ()) and where not in SERVED_STORE_FILES
                and "PYTEST_XDIST_WORKER" not in os.environ):
            raise pytest.UsageError(f"{where} takes the served store: add it to SERVED_STORE_FILES in tests/conftest.py")
    items.sort(key=lambda item: -weight[item.path])


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """--dist loadfile, whole files to each worker, but SERVED_STORE_FILES as one unit."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesWithTheServedStoreTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return "the served store's files" if path in SERVED_STORE_FILES else path

    return FilesWithTheServedStoreTogether(config, log)


def require_root() -> None:
    """Skip on a developer's unprivileged machine; fail in CI, where root is promised."""
    if os.geteuid() == 0 and Path("/dev/loop-control").exists():
        return
    message = "needs root and loop devices"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}, and CI=true promises them")
    pytest.skip(message)


@pytest.fixture
def fsbm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private FSBM_HOME per test: its own store and scratch root."""
    home = tmp_path / "home"
    monkeypatch.setenv("FSBM_HOME", str(home))
    monkeypatch.delenv("FSBM_STORE", raising=False)
    monkeypatch.delenv("FSBM_SCRATCH_ROOT", raising=False)
    return home


def _scratch_fs(fstype: str, size: int, home: Path, **kwargs: object) -> Iterator[scratch.ScratchFs]:
    require_root()
    fs = scratch.create(fstype, size, root=home / "scratch", **kwargs)  # type: ignore[arg-type]
    try:
        yield fs
    finally:
        scratch.destroy(fs.name, home / "scratch")


@pytest.fixture
def tmpfs_fs(fsbm_home: Path) -> Iterator[scratch.ScratchFs]:
    yield from _scratch_fs("tmpfs", 512 << 20, fsbm_home)


@pytest.fixture
def ext4_fs(fsbm_home: Path) -> Iterator[scratch.ScratchFs]:
    yield from _scratch_fs("ext4", 1 << 30, fsbm_home)


@pytest.fixture
def xfs_fs(fsbm_home: Path) -> Iterator[scratch.ScratchFs]:
    yield from _scratch_fs("xfs", 1 << 30, fsbm_home)


@pytest.fixture
def btrfs_fs(fsbm_home: Path) -> Iterator[scratch.ScratchFs]:
    yield from _scratch_fs("btrfs", 512 << 20, fsbm_home)


@pytest.fixture(scope="session")
def fsbench() -> Path:
    return fsbench_binary()


@pytest.fixture
def scheduler_apart(tmp_path: Path) -> Iterator[str]:
    """A Dask scheduler and two worker processes started on their own, as on a cluster (the
    `dask` command line, from a directory of their own): the scheduler's address."""
    elsewhere = tmp_path / "workers"
    elsewhere.mkdir()
    with cluster_apart(elsewhere) as (address, _):
        yield address


def strace_tt(at_us: int) -> str:
    """`at_us` microseconds into a trace, as strace -tt writes a line's time (from midnight)."""
    return f"00:00:{at_us // 1_000_000:02d}.{at_us % 1_000_000:06d}"


def run_fsbm(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run the installed `fsbm` command as a user would."""
    command = [str(Path(sys.executable).parent / "fsbm"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {}), "COLUMNS": "200"})


# A test's quick cost tables: two repetitions of 20 ms a case (quick's own: 3 of 250 ms),
# about half the time; the tests check what was run, not how precisely it priced.  The same
# effort as `fsbm bench` flags, and as the flags of the commands that measure tables themselves
# (`fsbm validate`, `fsbm demo`).
QUICK_TABLE_EFFORT = (2, 0.02)
QUICK_BENCH_FLAGS = ("--quick", "--reps", str(QUICK_TABLE_EFFORT[0]), "--case-seconds", str(QUICK_TABLE_EFFORT[1]))
QUICK_TABLE_FLAGS = ("--table-reps", str(QUICK_TABLE_EFFORT[0]), "--table-case-seconds", str(QUICK_TABLE_EFFORT[1]))


def quick_table_efforts(home: Path) -> set[tuple[int, float]]:
    """(repetitions, seconds a case) of every whole quick cost table measured into the store
    under `home` (fsbench runs of every case: no --only)."""
    import sqlite3

    with sqlite3.connect(home / "fsbm.sqlite") as db:
        configs = [json.loads(c) for (c,) in db.execute("SELECT config FROM runs WHERE kind = 'fsbench'")]
    return {(c["reps"], c["case_seconds"]) for c in configs if c.get("quick") and not c.get("only")}


WORKLOAD = "tar xf src.tar && grep -rc zzz src > /dev/null; cat src/f1 src/f2 > both; mv both src/both; rm -rf src"


@pytest.fixture
def traced(tmp_path: Path) -> Path:
    """A real workload traced here: untar, grep, cat, mv, rm of a 30-file tree."""
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    for i in range(30):
        (work / "src" / f"f{i}").write_bytes(os.urandom(1000 * (i + 1)))
    with tarfile.open(work / "src.tar", "w") as tar:
        tar.add(work / "src", arcname="src")
    for f in (work / "src").iterdir():
        f.unlink()
    (work / "src").rmdir()
    recording = record(["sh", "-c", WORKLOAD], tmp_path / "w.strace", cwd=work)
    assert recording.returncode == 0
    return recording.log


@dataclass(frozen=True)
class Served:
    home: Path
    store: Path
    log: Path            # a program recorded on ext4 with `fsbm trace record`
    command: str         # that program, to run again untraced
    candidates: tuple[str, str]

    @property
    def env(self) -> dict[str, str]:
        return {"FSBM_HOME": str(self.home)}


# Enough files that the served program's filesystem time outweighs the spread of its CPU time
# (four programs started, 40-60 ms here): with 60, ext4 and tmpfs were predicted 5-7% apart.
SERVED_FILES = 300


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One store for the API and report tests: quick cost tables of a scratch ext4 and tmpfs, and a
    recorded copy-grep-delete of a small tree on the ext4 (SERVED_FILES)."""
    require_root()
    home = tmp_path_factory.mktemp("api") / "home"
    env = {"FSBM_HOME": str(home)}
    made = []
    try:
        for fstype in ("ext4", "tmpfs"):
            fs = scratch.create(fstype, 512 << 20, name=f"api-{fstype}", root=home / "scratch")
            made.append(fs)
            done = run_fsbm("bench", "--fs", fs.name, *QUICK_BENCH_FLAGS, "--only",
                            "meta,read,write,overwrite,fsync", env=env)
            assert done.returncode == 0, done.stderr
        work = made[0].mount_point / "work"
        (work / "src").mkdir(parents=True)
        for i in range(SERVED_FILES):
            (work / "src" / f"f{i}.c").write_bytes(os.urandom(700 * (i % 60 + 1)))
        log = home.parent / "w.strace"
        command = f"cd {work} && cp -r src copy && grep -rc zzz copy > /dev/null; rm -rf copy"
        done = run_fsbm("trace", "record", "-o", str(log), "--scope", str(work), "--", "sh", "-c", command, env=env)
        assert done.returncode == 0, done.stderr
        yield Served(home, home / "fsbm.sqlite", log, command, (made[0].candidate, made[1].candidate))
    finally:
        for fs in made:
            scratch.destroy(fs.name, home / "scratch")


@dataclass(frozen=True)
class SessionCache:
    """Results made once by whichever test process asks first and read by every other: by
    both of xdist's workers, and by both halves of `make test`, which names one directory
    for the two (FSBM_TEST_CACHE).  Each result is a directory, made under a lock and renamed
    into place whole, so a process that waited finds it complete and one whose making failed
    leaves nothing the next would take for done."""
    root: Path

    def once(self, name: str, make: Callable[[Path], None]) -> Path:
        """The directory `name`, made by `make(directory)` if no process has made it yet."""
        done = self.root / name
        with open(self.root / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.is_dir():
                making = self.root / f"{name}.making"
                shutil.rmtree(making, ignore_errors=True)
                making.mkdir()
                make(making)
                making.rename(done)
        return done


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory: pytest.TempPathFactory) -> SessionCache:
    """FSBM_TEST_CACHE where `make test` sets it; else the directory xdist's workers' temporary
    directories share (or this process's own, run without xdist)."""
    if os.environ.get("FSBM_TEST_CACHE"):
        return SessionCache(Path(os.environ["FSBM_TEST_CACHE"]))
    base = tmp_path_factory.getbasetemp()
    return SessionCache(base.parent if "PYTEST_XDIST_WORKER" in os.environ else base)


@dataclass(frozen=True)
class Calibrated:
    store: Path   # holds one tracing calibration of this machine
    stdout: str   # what `fsbm trace calibrate` printed


@pytest.fixture(scope="session")
def calibrated(session_cache: SessionCache) -> Calibrated:
    """One real `fsbm trace calibrate --quick` for the whole `make test` (about a quarter of a
    minute), made on the quiet cores of its first half, in a store of its own: tests that
    predict a plain trace take it (give_calibration) rather than each measuring the same again."""
    def calibrate(into: Path) -> None:
        done = run_fsbm("trace", "calibrate", "--quick", env={"FSBM_HOME": str(into / "home")})
        assert done.returncode == 0, done.stderr
        (into / "stdout.txt").write_text(done.stdout)

    made = session_cache.once("tracing-calibration", calibrate)
    return Calibrated(made / "home" / "fsbm.sqlite", (made / "stdout.txt").read_text())


@pytest.fixture(scope="session")
def whole_table(session_cache: SessionCache) -> Callable[..., IngestResult]:
    """`whole_table(trace, keep_going=False)`: the trace parsed whole in one process, as
    `ingest` gives it, parsed once for every test that reads the same file the same way (a
    large capture takes tshark ten seconds).  The file, not its bytes: what the parse tells
    names it.  The table is shared: read it, never change it."""
    def table(trace: Path, keep_going: bool = False) -> IngestResult:
        seen = trace.stat()
        digest = hashlib.sha256(f"{trace.resolve()}\0{seen.st_size}\0{seen.st_mtime_ns}".encode()).hexdigest()[:20]

        def parse(into: Path) -> None:
            result = ingest([trace], into / "whole.parquet", keep_going=keep_going)
            (into / "result.pickle").write_bytes(pickle.dumps(result))

        made = session_cache.once(f"whole-{digest}-{'keep-going' if keep_going else 'strict'}", parse)
        return replace(pickle.loads((made / "result.pickle").read_bytes()), output=made / "whole.parquet")

    return table


def give_calibration(calibrated: Calibrated, store: Path) -> None:
    """Keep the session's tracing calibration in `store` too."""
    with ResultsStore(calibrated.store) as source:
        [(_, _, body)] = source.documents("tracing_calibration")
    with ResultsStore(store) as target:
        target.save_document("tracing_calibration", body, name="strace")


def chromium_path() -> str:
    """Debian's chromium, which the browser tests drive through playwright."""
    found = shutil.which("chromium")
    if not found:
        pytest.fail("chromium is missing: `make deps` installs Debian's package")
    return found


def three_call_log(path: Path, name: str = "a", size: int = 3) -> Path:
    """A strace log at `path` of an open, a read of `size` bytes and a close of /w/NAME: a
    profile of three events."""
    path.write_text(f'100 1700000000.000001 openat(AT_FDCWD, "/w/{name}", O_RDONLY) = 3</w/{name}>\n'
                    f'100 1700000000.000010 read(3</w/{name}>, "abc", {size}) = {size}\n'
                    f'100 1700000000.000020 close(3</w/{name}>) = 0\n')
    return path

"""The validation suite: real programs the predictor is judged on, in two fixed sets.

Each program works in one directory on the filesystem under test.  Its inputs are staged
there once per filesystem (untimed); each run starts from them with a cold cache, and what
the run made is removed after it, so every run and every filesystem does the same work.

The input tree is a slice of this machine's Python standard library (real source files of
real sizes, the same on every machine of this kind), made into a tar file once per fsbm
home.  `scale` shrinks the work for quick runs and tests.

Every program belongs to one of two sets (DESIGN.md: Validation):
- **dev**: the programs the model may be fitted, chosen and tuned on;
- **test**: programs held out.  Nothing is fitted, chosen or tuned on them; every run of
  them is reported (docs/validation.md).  The split is fixed here, before the model work it
  judges, and a program never moves from test to dev: a program that has been looked at to
  change the model is no longer unseen.  A program may join the development set later,
  where it lacks a kind of work (python-source-import: an interpreter loading and compiling
  modules, which checkpoint's few lines of Python hardly do; ninja-j2: compilers working at
  once, each between many calls, where parallel-xz's processes make few; compileall: files
  written under a temporary name and renamed into place, which no other development program
  does; kv-wal: a database in WAL mode, its index a mapped file written without system calls,
  which the other SQLite programs' rollback journals do not use); none joins the test set.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fsbm.errors import FsbmError

CORPUS_EXCLUDE = {"__pycache__", "site-packages", "dist-packages", "test", "tests", "idlelib", "ensurepip"}
Split = Literal["dev", "test"]
SPLITS: tuple[Split, ...] = ("dev", "test")


@dataclass(frozen=True)
class Program:
    """One real program: how to stage its inputs, the command, and what a run leaves behind."""

    name: str
    description: str
    stage: Callable[[Path, "Inputs"], None]
    command: list[str]
    leaves: tuple[str, ...]  # names (in the work directory) a run makes; removed after it
    split: Split = "dev"
    ok_exits: tuple[int, ...] = (0,)  # grep exits 1 where a file has no match


# fsbm's own source tree: the C projects the builds compile are in it.
SOURCE_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Inputs:
    """What the programs read: the corpus tar file, its size budget, and two C projects
    (fsbm's benchmark and its trace parser, each a directory of .c and .h files)."""

    corpus: Path
    scale: float
    c_sources: Path = SOURCE_ROOT / "microbench" / "src"
    parser_sources: Path = SOURCE_ROOT / "traces" / "native"


def build_corpus(path: Path, budget_bytes: int) -> Path:
    """A tar file of standard-library sources up to `budget_bytes`, in path order (stable)."""
    if path.exists():
        return path
    root = Path(sysconfig.get_paths()["stdlib"])
    chosen, total = [], 0
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in CORPUS_EXCLUDE)
        for name in sorted(files):
            file = Path(directory) / name
            if not file.is_file() or file.is_symlink():
                continue
            size = file.stat().st_size
            if total + size > budget_bytes:
                continue
            chosen.append(file)
            total += size
    if not chosen:
        raise FsbmError(f"no source files found under {root} for the validation corpus")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with tarfile.open(partial, "w") as tar:
        for file in chosen:
            tar.add(file, arcname=str(Path("tree") / file.relative_to(root)), recursive=False)
    partial.replace(path)
    return path


def copy_corpus(work: Path, inputs: Inputs) -> None:
    """The corpus tar file and an empty out/ to unpack it into."""
    shutil.copyfile(inputs.corpus, work / "corpus.tar")
    (work / "out").mkdir()


def _unpack_tree(work: Path, inputs: Inputs) -> None:
    with tarfile.open(inputs.corpus) as tar:
        tar.extractall(work, filter="data")


def _copy_c_sources(work: Path, sources: Path, scale: float) -> list[str]:
    """A C project's headers and its first `scale` of .c files (at least two) copied into
    `work`; the .c files' names, sorted."""
    units = sorted(sources.glob("*.c"))
    keep = units[:max(2, round(len(units) * scale))]
    for file in keep + sorted(sources.glob("*.h")):
        shutil.copyfile(file, work / file.name)
    return [file.name for file in keep]


def _c_project(work: Path, inputs: Inputs) -> None:
    """The benchmark's C sources and a Makefile that compiles each at -O1."""
    _copy_c_sources(work, inputs.c_sources, inputs.scale)
    (work / "Makefile").write_text("OBJS := $(patsubst %.c,%.o,$(sort $(wildcard *.c)))\n"
                                   "all: $(OBJS)\n%.o: %.c\n\t$(CC) -std=c11 -D_GNU_SOURCE -O1 -c -o $@ $<\n")


def _ninja_project(work: Path, inputs: Inputs) -> None:
    """The trace parser's C sources and a build.ninja that compiles each at -O2."""
    units = _copy_c_sources(work, inputs.parser_sources, inputs.scale)
    lines = ["rule cc", "  command = gcc -std=c11 -D_GNU_SOURCE -O2 -c -o $out $in"]
    lines += [f"build {Path(unit).stem}.o: cc {unit}" for unit in units]
    (work / "build.ninja").write_text("\n".join(lines) + "\n")


def _write_script(work: Path, setup: list[str], transactions: Iterator[list[str]]) -> None:
    """script.sql for sqlite3: the setup statements, then each transaction's statements
    between BEGIN and COMMIT."""
    lines = list(setup)
    for statements in transactions:
        lines += ["BEGIN;", *statements, "COMMIT;"]
    (work / "script.sql").write_text("\n".join(lines) + "\n")


def _sqlite_script(work: Path, inputs: Inputs) -> None:
    rng = random.Random(7)

    def transaction(t: int) -> list[str]:
        inserts = [f"INSERT INTO orders(customer, amount, note) VALUES ('c{rng.randrange(1000)}', "
                   f"{rng.random() * 100:.2f}, '{'x' * rng.randrange(20, 200)}');" for _ in range(10)]
        return inserts + [f"UPDATE orders SET amount = amount * 1.01 WHERE id % 7 = {t % 7};"]

    _write_script(work, ["PRAGMA journal_mode=DELETE;", "PRAGMA synchronous=FULL;",
                         "CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, customer TEXT, amount REAL, "
                         "note TEXT);"],
                  (transaction(t) for t in range(max(20, round(300 * inputs.scale)))))


def _big_database(work: Path, inputs: Inputs) -> None:
    """A table of ~1 KiB rows (about 200 MiB at scale 1) and a query of random point lookups:
    each lookup is a walk down the B-tree, one random 4 KiB page read on a cold cache."""
    rows = max(20_000, round(200_000 * inputs.scale))
    lookups = max(500, round(4000 * inputs.scale))
    build = ("PRAGMA page_size=4096; PRAGMA journal_mode=OFF; CREATE TABLE t(id INTEGER PRIMARY KEY, payload BLOB);"
             f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows}) "
             "INSERT INTO t SELECT i, randomblob(1000) FROM n;")
    subprocess.run(["sqlite3", str(work / "big.db"), build], check=True, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL)
    ids = random.Random(11).sample(range(1, rows + 1), lookups)
    (work / "lookups.sql").write_text("SELECT sum(length(payload)) FROM t WHERE id IN ("
                                      + ",".join(map(str, ids)) + ");\n")


def _big_database_updates(work: Path, inputs: Inputs) -> None:
    """The large table of _big_database and transactions of random point updates to it: each
    rewrites a few pages scattered over a 200 MiB file, journalled (DELETE) and synced (FULL),
    as an application database updates its records.  A row keeps its size, so a run rewrites
    the same pages every time."""
    _big_database(work, inputs)
    rows = max(20_000, round(200_000 * inputs.scale))
    rng = random.Random(13)
    _write_script(work, ["PRAGMA journal_mode=DELETE;", "PRAGMA synchronous=FULL;"],
                  ([f"UPDATE t SET payload = randomblob(1000) WHERE id = {rng.randrange(1, rows + 1)};"
                    for _ in range(16)] for _ in range(max(20, round(100 * inputs.scale)))))


def _git_repository(work: Path, inputs: Inputs) -> None:
    """The tree, committed to a git repository (untimed), for a program that reads it back."""
    _unpack_tree(work, inputs)
    subprocess.run(["sh", "-c", "git init -q && git add -A && "
                                "git -c user.name=fsbm -c user.email=fsbm@localhost commit -q -m corpus"],
                   cwd=work / "tree", check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


def _text_file(work: Path, inputs: Inputs) -> None:
    """One large text file of source lines (the corpus's, repeated to about 48 MiB at scale 1)."""
    budget = max(4 << 20, round((48 << 20) * inputs.scale))
    written = 0
    with tarfile.open(inputs.corpus) as tar, open(work / "lines.txt", "wb") as out:
        members = [m for m in tar.getmembers() if m.isfile()]
        while written < budget:
            for member in members:
                data = tar.extractfile(member).read()  # type: ignore[union-attr]
                out.write(data)
                written += len(data)
                if written >= budget:
                    break


def _sqlite_wal_script(work: Path, inputs: Inputs) -> None:
    """Many small transactions in WAL mode (synchronous=NORMAL: a sync at each checkpoint, not
    at each commit), as an application database runs."""
    rng = random.Random(13)

    def transaction(t: int) -> list[str]:
        return [f"INSERT INTO events(kind, at, body) VALUES ('k{rng.randrange(50)}', {t}.{rng.randrange(1000)}, "
                f"randomblob({rng.randrange(100, 1500)}));" for _ in range(5)]

    _write_script(work, ["PRAGMA journal_mode=WAL;", "PRAGMA synchronous=NORMAL;", "PRAGMA wal_autocheckpoint=500;",
                         "CREATE TABLE IF NOT EXISTS events(id INTEGER PRIMARY KEY, kind TEXT, at REAL, body BLOB);",
                         "CREATE INDEX IF NOT EXISTS events_kind ON events(kind);"],
                  (transaction(t) for t in range(max(100, round(3000 * inputs.scale)))))


def _key_value_wal_script(work: Path, inputs: Inputs) -> None:
    """A key-value table in WAL mode (synchronous=NORMAL): filled in one transaction, then
    small transactions that each read two keys and rewrite three, as a service keeps its
    state.  The readers and writers meet in the shared-memory index (the -shm file, mapped)."""
    keys = max(1000, round(8000 * inputs.scale))
    rng = random.Random(17)

    def transaction() -> list[str]:
        reads = [f"SELECT length(value) FROM kv WHERE key = {rng.randrange(keys)};" for _ in range(2)]
        writes = [f"UPDATE kv SET value = randomblob({rng.randrange(200, 900)}), version = version + 1 "
                  f"WHERE key = {rng.randrange(keys)};" for _ in range(3)]
        return reads + writes

    _write_script(work, ["PRAGMA journal_mode=WAL;", "PRAGMA synchronous=NORMAL;",
                         "CREATE TABLE kv(key INTEGER PRIMARY KEY, version INTEGER, value BLOB);",
                         f"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {keys - 1}) "
                         "INSERT INTO kv SELECT i, 0, randomblob(500) FROM n;"],
                  (transaction() for _ in range(max(200, round(4000 * inputs.scale)))))


def _wheel(work: Path, inputs: Inputs) -> None:
    """A pure-Python wheel built from the corpus's packages (a real wheel: METADATA, WHEEL and
    RECORD), for pip to install into a directory."""
    name, version = "fsbmcorpus", "1.0"
    info = f"{name}-{version}.dist-info"
    records = []
    with tarfile.open(inputs.corpus) as tar, \
            zipfile.ZipFile(work / f"{name}-{version}-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as wheel:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".py"):
                arcname = f"{name}/" + member.name.removeprefix("tree/")
                wheel.writestr(arcname, tar.extractfile(member).read())  # type: ignore[union-attr]
                records.append(arcname)
        for arcname, text in ((f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"),
                              (f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: fsbm\nRoot-Is-Purelib: true\n"
                                                "Tag: py3-none-any\n")):
            wheel.writestr(arcname, text)
            records.append(arcname)
        wheel.writestr(f"{info}/RECORD", "".join(f"{r},,\n" for r in records + [f"{info}/RECORD"]))


# What `import pandas` needs, copied from fsbm's own environment into the work directory.
IMPORTED_PACKAGES = ("pandas", "numpy", "numpy.libs", "dateutil", "pytz", "tzdata", "six.py")


def _python_packages(work: Path, inputs: Inputs) -> None:
    """A large package and what it imports (pandas, numpy), as files in the work directory."""
    site = Path(sysconfig.get_paths()["purelib"])
    (work / "lib").mkdir()
    for name in IMPORTED_PACKAGES:
        source = site / name
        if source.is_dir():
            shutil.copytree(source, work / "lib" / name, symlinks=True)
        elif source.is_file():
            shutil.copyfile(source, work / "lib" / name)


def _nothing(work: Path, inputs: Inputs) -> None:
    """A program that makes its own input."""


# Modules python-source-import loads from the corpus tree.  The tree is a slice of the standard
# library, so a package it holds only part of (urllib, tomllib) hides the whole one: none of these
# needs one.
SOURCE_IMPORTS = ("asyncio, json, concurrent.futures, argparse, tarfile, typing, ast, difflib, inspect, calendar, "
                  "configparser, _pydecimal, dataclasses, pickletools, optparse, imaplib, ftplib, statistics, "
                  "fractions, uuid, csv, html.parser, dbm, ctypes, logging, unittest")


def programs(scale: float = 1.0, split: Split | None = None) -> list[Program]:
    """The suite, or one set of it.  Every command is a real program from Debian's packages or
    fsbm's own environment (pip, Python)."""
    write_mib = max(16, round(256 * scale))
    ckpt_mib = max(8, round(48 * scale))
    python = [sys.executable, "-S", "-B"]  # -S: only the work directory's packages; -B: write no bytecode
    suite = [
        Program("untar", "unpack a source tree (tar -x)", copy_corpus, ["tar", "-xf", "corpus.tar", "-C", "out"],
                ("out/tree",)),
        Program("compile", "compile a multi-file C project (make, gcc -O1)", _c_project, ["make", "-s", "-j1"],
                ("*.o",)),
        Program("git-commit", "git init, add and commit a source tree", _unpack_tree,
                ["sh", "-c", "cd tree && git init -q && git add -A && "
                             "git -c user.name=fsbm -c user.email=fsbm@localhost commit -q -m corpus"], ("tree/.git",)),
        Program("sqlite", "SQLite transactions (journal_mode=DELETE, synchronous=FULL)", _sqlite_script,
                ["sqlite3", "db.sqlite", ".read script.sql"], ("db.sqlite", "db.sqlite-journal")),
        Program("grep", "search a source tree (grep -r)", _unpack_tree,
                ["grep", "-r", "-c", "-e", "import", "tree"], (), ok_exits=(0, 1)),
        Program("copy-delete", "copy a source tree, then delete the copy (cp -r, rm -rf)", _unpack_tree,
                ["sh", "-c", "cp -r tree copy && rm -rf copy"], ("copy",)),
        Program("random-reads", "random point lookups in a large SQLite database (4 KiB pages)", _big_database,
                ["sqlite3", "-readonly", "big.db", ".read lookups.sql"], ()),
        Program("sqlite-update", "SQLite transactions of random point updates in a large database "
                "(journal_mode=DELETE, synchronous=FULL)", _big_database_updates,
                ["sqlite3", "big.db", ".read script.sql"], ("big.db-journal",)),
        Program("tar-gzip", "archive and compress a source tree (tar -czf)", _unpack_tree,
                ["tar", "-czf", "tree.tgz", "tree"], ("tree.tgz",)),
        Program("git-status", "status and diff of a committed tree (git status, git diff --stat)", _git_repository,
                ["sh", "-c", "cd tree && git status --porcelain && git diff --stat HEAD"], ()),
        Program("sort", "sort a large text file, temporary files beside it (sort -T .)", _text_file,
                ["sort", "-T", ".", "-S", "16M", "-o", "sorted.txt", "lines.txt"], ("sorted.txt", "sort*")),
        Program("parallel-gzip", "compress a tree's Python files two gzip processes at a time (xargs -P 2)",
                _unpack_tree, ["sh", "-c", "find tree -name '*.py' -print0 | xargs -0 -P 2 -n 40 gzip -kf"],
                ("tree/**/*.py.gz",)),
        Program("parallel-xz", "compress a tree's Python files two xz processes at a time (xargs -P 2, xz -6): "
                "processes computing at once between few calls", _unpack_tree,
                ["sh", "-c", "find tree -name '*.py' -print0 | xargs -0 -P 2 -n 40 xz -6 -kf"], ("tree/**/*.py.xz",)),
        Program("ninja-j2", "compile fsbm's trace parser two jobs at a time (ninja -j2, "
                "gcc -O2): compilers working at once, each between many calls", _ninja_project, ["ninja", "-j2"],
                ("*.o", ".ninja_log", ".ninja_deps")),
        Program("tar-pipe", "mirror a source tree through a pipe (tar -c | tar -x, owners and times kept): "
                "a reader and a writer at once", _unpack_tree,
                ["sh", "-c", "mkdir mirror && tar -cf - -C tree . | tar -xpf - -C mirror"], ("mirror",)),
        Program("checkpoint", f"save three {ckpt_mib} MiB checkpoint files, each fsynced (Python, 1 MiB writes)",
                _nothing, [*python, "-c", "import os\nbuf = os.urandom(1 << 20)\nfor f in range(3):\n"
                                          f"    with open(f'ckpt{{f}}.bin', 'wb') as out:\n"
                                          f"        for _ in range({ckpt_mib}):\n"
                                          "            out.write(buf)\n"
                                          "        out.flush()\n        os.fsync(out.fileno())\n"],
                ("ckpt*.bin",)),
        Program("python-source-import", "a cold import of standard-library modules from their sources (Python, "
                "compiled as they load, no bytecode written)", _unpack_tree,
                [*python, "-W", "ignore", "-c", f"import sys; sys.path.insert(0, 'tree'); import {SOURCE_IMPORTS}"], ()),
        Program("compileall", "byte-compile a tree's Python files (python -m compileall): each .pyc written "
                "under a temporary name and renamed into place", _unpack_tree,
                [sys.executable, "-S", "-m", "compileall", "-q", "tree"], ("tree/**/__pycache__",)),
        Program("kv-wal", "a key-value table in SQLite's WAL mode (synchronous=NORMAL): reads and rewrites "
                "of random keys, readers and writers meeting in the mapped -shm index", _key_value_wal_script,
                ["sqlite3", "kv.sqlite", ".read script.sql"], ("kv.sqlite", "kv.sqlite-wal", "kv.sqlite-shm")),
        # The test set: held out (module docstring).
        Program("rsync", "mirror a source tree (rsync -a)", _unpack_tree, ["rsync", "-a", "tree/", "mirror/"],
                ("mirror",), split="test"),
        Program("pip-install", "install a pure-Python wheel into a directory (pip install --target)", _wheel,
                [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-cache-dir",
                 "--disable-pip-version-check", "--target", "site", "fsbmcorpus-1.0-py3-none-any.whl"],
                ("site",), split="test"),
        Program("make-j2", "compile a multi-file C project two jobs at a time (make -j2, gcc -O1)", _c_project,
                ["make", "-s", "-j2"], ("*.o",), split="test"),
        Program("sqlite-wal", "SQLite transactions in WAL mode (synchronous=NORMAL)", _sqlite_wal_script,
                ["sqlite3", "wal.sqlite", ".read script.sql"], ("wal.sqlite", "wal.sqlite-wal", "wal.sqlite-shm"),
                split="test"),
        Program("find-stat", "stat every file of a tree (find -exec stat {} +)", _unpack_tree,
                ["find", "tree", "-type", "f", "-exec", "stat", "-c", "%s %Y %n", "{}", "+"], (), split="test"),
        Program("write-fsync", f"write {write_mib} MiB sequentially, then fsync (dd conv=fsync)", _nothing,
                ["dd", "if=/dev/zero", "of=big.bin", "bs=1M", f"count={write_mib}", "conv=fsync", "status=none"],
                ("big.bin",), split="test"),
        Program("python-import", "a cold import of a large Python package (pandas, numpy)", _python_packages,
                [*python, "-c", "import sys; sys.path.insert(0, 'lib'); import pandas"], (), split="test"),
    ]
    return [p for p in suite if split is None or p.split == split]


def staged_once(directory: Path, key: str, fill: Callable[[Path], None]) -> Path:
    """`directory` filled by `fill` once for `key` (what the inputs were made from): a
    directory staged for another key, or half-staged, is emptied and filled again."""
    done = directory / ".staged"
    if done.exists() and done.read_text() == key:
        return directory
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    fill(directory)
    done.write_text(key)
    return directory


def remove_matching(directory: Path, patterns: tuple[str, ...]) -> None:
    """Remove what in `directory` matches any of the glob `patterns`, directories whole."""
    for pattern in patterns:
        for path in directory.glob(pattern):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


def clean(work: Path, program: Program) -> None:
    """Remove what a run of `program` made in `work`."""
    remove_matching(work, program.leaves)


def run_command(program: Program, work: Path) -> None:
    """Run the program once (untimed here), failing loudly if it fails."""
    done = subprocess.run(program.command, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode not in program.ok_exits:
        raise FsbmError(f"validation program {program.name} failed (exit {done.returncode}): {done.stderr.strip()[:300]}")

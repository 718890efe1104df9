"""The validation suite: real programs the predictor is judged on (issue 7).

Each program works in one directory on the filesystem under test.  Its inputs are staged
there once per filesystem (untimed); each run starts from them with a cold cache, and what
the run made is removed after it, so every run and every filesystem does the same work.

The input tree is a slice of this machine's Python standard library (real source files of
real sizes, the same on every machine of this kind), made into a tar file once per fsbm
home.  `scale` shrinks the work for quick runs and tests.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sysconfig
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fsbm.errors import FsbmError

CORPUS_EXCLUDE = {"__pycache__", "site-packages", "dist-packages", "test", "tests", "idlelib", "ensurepip"}


@dataclass(frozen=True)
class Program:
    """One real program: how to stage its inputs, the command, and what a run leaves behind."""

    name: str
    description: str
    stage: Callable[[Path, "Inputs"], None]
    command: list[str]
    leaves: tuple[str, ...]  # names (in the work directory) a run makes; removed after it


@dataclass(frozen=True)
class Inputs:
    """What the programs read: the corpus tar file, its size budget, and the C sources."""

    corpus: Path
    c_sources: Path
    scale: float


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


def _c_project(work: Path, inputs: Inputs) -> None:
    sources = sorted(inputs.c_sources.glob("*.c"))
    keep = sources[:max(2, round(len(sources) * inputs.scale))]
    for file in keep + sorted(inputs.c_sources.glob("*.h")):
        shutil.copyfile(file, work / file.name)
    (work / "Makefile").write_text("OBJS := $(patsubst %.c,%.o,$(sort $(wildcard *.c)))\n"
                                   "all: $(OBJS)\n%.o: %.c\n\t$(CC) -std=c11 -D_GNU_SOURCE -O1 -c -o $@ $<\n")


def _sqlite_script(work: Path, inputs: Inputs) -> None:
    transactions = max(20, round(300 * inputs.scale))
    rng = random.Random(7)
    lines = ["PRAGMA journal_mode=DELETE;", "PRAGMA synchronous=FULL;",
             "CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, customer TEXT, amount REAL, note TEXT);"]
    for t in range(transactions):
        lines.append("BEGIN;")
        for _ in range(10):
            lines.append(f"INSERT INTO orders(customer, amount, note) VALUES ('c{rng.randrange(1000)}', "
                         f"{rng.random() * 100:.2f}, '{'x' * rng.randrange(20, 200)}');")
        lines.append(f"UPDATE orders SET amount = amount * 1.01 WHERE id % 7 = {t % 7};")
        lines.append("COMMIT;")
    (work / "script.sql").write_text("\n".join(lines) + "\n")


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


def programs(scale: float = 1.0) -> list[Program]:
    """The suite.  Every command is a real program from Debian's packages."""
    return [
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
                ["grep", "-r", "-c", "-e", "import", "tree"], ()),
        Program("copy-delete", "copy a source tree, then delete the copy (cp -r, rm -rf)", _unpack_tree,
                ["sh", "-c", "cp -r tree copy && rm -rf copy"], ("copy",)),
        Program("random-reads", "random point lookups in a large SQLite database (4 KiB pages)", _big_database,
                ["sqlite3", "-readonly", "big.db", ".read lookups.sql"], ()),
    ]


def clean(work: Path, program: Program) -> None:
    """Remove what a run of `program` made in `work`."""
    for pattern in program.leaves:
        for path in work.glob(pattern):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


def run_command(program: Program, work: Path) -> None:
    """Run the program once (untimed here), failing loudly if it fails."""
    done = subprocess.run(program.command, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode != 0 and not (program.name == "grep" and done.returncode == 1):
        raise FsbmError(f"validation program {program.name} failed (exit {done.returncode}): {done.stderr.strip()[:300]}")

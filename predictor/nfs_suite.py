"""The NFS suite: real client jobs against a real NFS server (microbench/nfs_server.py),
whose captures `fsbm validate --capture` predicts and whose runtimes it measures.

Each job is a shell loop of libnfs's own programs (nfs-cp, nfs-cat, nfs-ls), one process per
file where the job is many files: a client that mounts, looks up, and reads or writes, as a
script that copies files to or from a share does.  The server exports one directory of a
candidate filesystem for the job (its `server` side); what the client reads or writes
locally is in a directory of its own on this machine's disk (its `client` side), the same for
every candidate.  A job sees the share's URL as $SERVER.

The sets are fixed before any rule about captures is fitted: the test set is held out, as
the strace suite's is (predictor/suite.py).
"""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fsbm.errors import FsbmError
from fsbm.predictor.suite import SPLITS, Split, remove_matching, staged_once

SMALL_FILES = 120  # at scale 1
SMALL_MEDIAN_BYTES = 8 << 10
SMALL_LARGEST_BYTES = 512 << 10
LARGE_BYTES = 256 << 20
LARGE_SET = 4  # files of LARGE_BYTES / LARGE_SET each, read one after another
LIST_DIRECTORIES, LIST_FILES_EACH = 40, 100
FLAT_FILES = 4000  # one directory's, at scale 1

Stager = Callable[[Path, float], None]


@dataclass(frozen=True)
class NfsProgram:
    """One client job: `script` (sh) runs in its client directory with $SERVER set to the
    share; `stage_client` and `stage_server` put its inputs on either side once; a run leaves
    `server_leaves` on the share and `client_leaves` beside the client (globs), removed
    before every run."""

    name: str
    description: str
    script: str
    stage_client: Stager
    stage_server: Stager
    server_leaves: tuple[str, ...] = ()
    client_leaves: tuple[str, ...] = ()
    split: Split = "dev"


def _sizes(count: int, seed: int) -> list[int]:
    """File sizes as a share's small files run: log-normal around SMALL_MEDIAN_BYTES, from
    1 KiB to SMALL_LARGEST_BYTES, the same for every seed's caller."""
    rng = random.Random(seed)
    return [min(max(int(rng.lognormvariate(0, 1.2) * SMALL_MEDIAN_BYTES), 1 << 10), SMALL_LARGEST_BYTES)
            for _ in range(count)]


def _small_names(prefix: str, scale: float) -> list[str]:
    return [f"{prefix}{i:04d}.dat" for i in range(max(8, round(SMALL_FILES * scale)))]


def _names_file(directory: Path, prefix: str, scale: float) -> None:
    """names.txt: the small files' names, which the job's loop reads."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "names.txt").write_text("\n".join(_small_names(prefix, scale)) + "\n")


def _small_files(directory: Path, prefix: str, scale: float, seed: int) -> None:
    """max(8, SMALL_FILES * scale) files of random bytes, and names.txt listing them."""
    rng = random.Random(seed)
    names = _small_names(prefix, scale)
    directory.mkdir(parents=True, exist_ok=True)
    for name, size in zip(names, _sizes(len(names), seed)):
        (directory / name).write_bytes(rng.randbytes(size))
    _names_file(directory, prefix, scale)


def _large_file(path: Path, size: float, seed: int = 7) -> None:
    """A file of max(16 MiB, `size`) random bytes, written a MiB at a time."""
    rng = random.Random(seed)
    block = rng.randbytes(1 << 20)
    with path.open("wb") as out:
        for _ in range(max(16, round(size) >> 20)):
            out.write(block)


def _nothing(_: Path, __: float) -> None:
    """A side this job stages nothing on."""


def _client_small(client: Path, scale: float) -> None:
    _small_files(client / "files", "in-", scale, seed=1)


def _server_small(server: Path, scale: float) -> None:
    _small_files(server, "back-", scale, seed=2)


def _client_names(client: Path, scale: float) -> None:
    _names_file(client, "back-", scale)


def _client_large(client: Path, scale: float) -> None:
    _large_file(client / "big.bin", LARGE_BYTES * scale)


def _server_large(server: Path, scale: float) -> None:
    _large_file(server / "big.bin", LARGE_BYTES * scale)


def _server_large_set(server: Path, scale: float) -> None:
    """LARGE_SET files that together hold LARGE_BYTES (scaled), each of other bytes."""
    for k in range(LARGE_SET):
        _large_file(server / f"part-{k}.bin", LARGE_BYTES * scale / LARGE_SET, seed=11 + k)


def _server_tree(server: Path, scale: float) -> None:
    """LIST_DIRECTORIES directories of LIST_FILES_EACH small files each (scaled)."""
    each = max(8, round(LIST_FILES_EACH * scale))
    for d in range(LIST_DIRECTORIES):
        directory = server / "tree" / f"d{d}"
        directory.mkdir(parents=True, exist_ok=True)
        for f in range(each):
            (directory / f"f{f:03d}.txt").write_bytes(b"x" * (100 + 37 * f))


def _server_flat(server: Path, scale: float) -> None:
    """One directory of FLAT_FILES small files (scaled), names in no order a listing keeps."""
    directory = server / "flat"
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(5)
    numbers = list(range(max(64, round(FLAT_FILES * scale))))
    rng.shuffle(numbers)
    for n in numbers:
        (directory / f"entry-{n:05d}.log").write_bytes(b"y" * rng.randrange(1, 3000))


def nfs_programs(split: Split | None = None) -> list[NfsProgram]:
    """The NFS suite, or one set of it."""
    suite = [
        NfsProgram("nfs-copy-in", "copy small files to the share, one nfs-cp each",
                   'for f in $(cat files/names.txt); do nfs-cp "files/$f" "$SERVER/$f" > /dev/null; done',
                   _client_small, _nothing, server_leaves=("in-*",)),
        NfsProgram("nfs-read-back", "read small files from the share, one nfs-cat each",
                   'for f in $(cat names.txt); do nfs-cat "$SERVER/$f" > /dev/null; done',
                   _client_names, _server_small),
        NfsProgram("nfs-large-write", "copy a large file to the share (nfs-cp)",
                   'nfs-cp big.bin "$SERVER/big-in.bin" > /dev/null', _client_large, _nothing,
                   server_leaves=("big-in.bin",)),
        # Judged once as a test job before it joined this set (docs/test-set-runs.md).
        NfsProgram("nfs-list", "list a tree on the share recursively (nfs-ls -R)",
                   'nfs-ls -R "$SERVER/tree" > /dev/null', _nothing, _server_tree),
        # Joined after nfs-large-read (test) had missed on btrfs in five runs: the question of how
        # a server's streamed reads cost is studied here, not on the test job (docs/test-set-runs.md).
        NfsProgram("nfs-stream-parts", f"read {LARGE_SET} large files from the share, one nfs-cat each",
                   f'for k in {" ".join(str(k) for k in range(LARGE_SET))}; do '
                   'nfs-cat "$SERVER/part-$k.bin" > /dev/null; done', _nothing, _server_large_set),
        # The test set: held out.
        NfsProgram("nfs-large-read", "read a large file from the share (nfs-cat)",
                   'nfs-cat "$SERVER/big.bin" > /dev/null', _nothing, _server_large, split="test"),
        NfsProgram("nfs-list-flat", "list one large directory on the share (nfs-ls)",
                   'nfs-ls "$SERVER/flat" > /dev/null', _nothing, _server_flat, split="test"),
        NfsProgram("nfs-copy-out", "copy small files from the share, one nfs-cp each",
                   'mkdir -p out && for f in $(cat names.txt); do nfs-cp "$SERVER/$f" "out/$f" > /dev/null; done',
                   _client_names, _server_small, client_leaves=("out",), split="test"),
        # Held out from the day nfs-stream-parts joined the development set.
        NfsProgram("nfs-copy-within", "copy small files to new names on the share, one nfs-cp each",
                   'for f in $(cat names.txt); do nfs-cp "$SERVER/$f" "$SERVER/copy-$f" > /dev/null; done',
                   _client_names, _server_small, server_leaves=("copy-*",), split="test"),
    ]
    if split is not None and split not in SPLITS:
        raise FsbmError(f"no set {split!r} in the NFS suite; choose from {', '.join(SPLITS)}")
    return [p for p in suite if split is None or p.split == split]


# What the staged inputs are made of: a side staged with other sizes is staged again.
INPUTS = (f"{SMALL_FILES} files around {SMALL_MEDIAN_BYTES} B up to {SMALL_LARGEST_BYTES} B; {LARGE_BYTES} B"
          f" (in {LARGE_SET} parts); "
          f"{LIST_DIRECTORIES} x {LIST_FILES_EACH} listed; {FLAT_FILES} in one directory")


def stage_side(directory: Path, stager: Stager, scale: float) -> Path:
    """`stager`'s inputs in `directory`, staged once per scale and INPUTS (suite.staged_once)."""
    return staged_once(directory, f"scale {scale:g}; {INPUTS}\n", lambda where: stager(where, scale))


def clean_sides(program: NfsProgram, server: Path, client: Path) -> None:
    """Remove what a run of `program` left on the share and beside the client."""
    remove_matching(server, program.server_leaves)
    remove_matching(client, program.client_leaves)


def run_job(program: NfsProgram, client: Path, share_url: str) -> None:
    """Run the job once against the share at `share_url`, failing loudly if it fails."""
    done = subprocess.run(["sh", "-e", "-c", program.script], cwd=client, env={**os.environ, "SERVER": share_url},
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise FsbmError(f"NFS job {program.name} failed (exit {done.returncode}): {done.stderr.strip()[:300]}")


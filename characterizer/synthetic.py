"""A profile as a synthetic workload fsbm can replay: Tang's workload generator (thesis ch. 6).

The output is an event table, so ``fsbm replay`` runs it like any trace, metadata included.
It has the profile's calls in the profile's proportions (every operation of the
vocabulary, not only Tang's rows), its share of consecutive reads and writes, its request
sizes and file sizes, arranged so that every call succeeds when replayed:
- reads and writes happen in sessions: an open (or a create) of a file, then that
  session's data calls, then a close; within a session an access is consecutive with the
  profile's probability, otherwise at a random aligned offset within the file;
- a readdir lists a directory between an open and a close of it;
- unlink and rmdir remove files and empty directories the tree provides for them; mkdir
  and create make new ones; stat looks at files of the tree;
- calls fsbm cannot replay as themselves (seek, mmap, other) and attribute changes become
  readlinks of a regular file, which fail with EINVAL as the plan expects: one system
  call that is none of Tang's rows, so every share stays the same.  (setattr is folded in
  because fsreplay changes modes with fchmodat2, which strace before 6.5 cannot decode,
  so a trace of the replay would lose them.)
Proportions are met by exact counts (largest remainders; consecutive accesses likewise), not by sampling, so a profile of
the synthetic workload's own trace gives the original's percentages back closely.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from fsbm.characterizer.profile import Profile
from fsbm.traces.schema import EVENT_SCHEMA, metadata
from fsbm.traces.vocabulary import OPERATIONS

FILLER = "readlink"
UNREPLAYABLE = ("seek", "mmap", "other", "setattr")
SYSCALL = {"open": "openat", "create": "openat", "close": "close", "read": "pread64", "write": "pwrite64",
           "stat": "newfstatat", "setattr": "chmod", "readdir": "getdents64", "mkdir": "mkdir", "rmdir": "rmdir",
           "unlink": "unlink", "rename": "rename", "link": "link", "symlink": "symlink", "readlink": "readlink",
           "fsync": "fsync"}
MAX_FILE = 16 << 20


def _counts(profile: Profile, events: int) -> dict[str, int]:
    """Calls per operation for `events` calls, in the profile's proportions (largest remainders)."""
    ops = profile.body["operations"]
    total = sum(entry["count"] for entry in ops.values())
    if not total:
        raise ValueError("the profile has no calls to imitate")
    shares = {name: ops[name]["count"] / total for name in OPERATIONS if name in ops}
    exact = {name: share * events for name, share in shares.items()}
    counts = {name: int(value) for name, value in exact.items()}
    for name in sorted(exact, key=lambda n: exact[n] - counts[n], reverse=True)[:events - sum(counts.values())]:
        counts[name] += 1
    for name in UNREPLAYABLE:
        counts[FILLER] = counts.get(FILLER, 0) + counts.pop(name, 0)
    return counts


def _sampler(histogram: list[dict[str, int]], rng: np.random.Generator, default: int) -> callable:
    """Draw values from a log2 histogram: a bucket by its count, then its lower edge (at least 1)."""
    if not histogram:
        return lambda: default
    edges = np.array([max(1, b["lo"]) for b in histogram])
    weights = np.array([b["count"] for b in histogram], dtype=float)
    weights /= weights.sum()
    return lambda: int(rng.choice(edges, p=weights))


class _Writer:
    """Rows of the event table, in order."""

    def __init__(self) -> None:
        self.rows: dict[str, list] = {name: [] for name in ("op", "file", "path2", "offset", "size", "errno")}

    def add(self, op: str, file: str, *, offset: int | None = None, size: int | None = None,
            path2: str | None = None, errno: str | None = None) -> None:
        for name, value in (("op", op), ("file", file), ("path2", path2), ("offset", offset), ("size", size),
                            ("errno", errno)):
            self.rows[name].append(value)

    def table(self) -> pa.Table:
        n = len(self.rows["op"])
        ops, files = self.rows["op"], self.rows["file"]
        paths = [None if op in ("read", "write", "close", "fsync", "readdir") else f for op, f in zip(ops, files)]
        return pa.table({
            "seq": np.arange(n, dtype=np.int64), "ts": pa.nulls(n, pa.int64()), "dur": pa.nulls(n, pa.int64()),
            "actor": ["1"] * n, "op": ops, "orig": [SYSCALL[o] for o in ops], "file": files, "path": paths,
            "path2": self.rows["path2"], "offset": self.rows["offset"], "size": self.rows["size"],
            "ret": [-1 if e else s if s is not None else 0 for s, e in zip(self.rows["size"], self.rows["errno"])], "errno": self.rows["errno"],
            "record": np.arange(n, dtype=np.int64),
        }).cast(EVENT_SCHEMA)


class _Generator:
    """Turns the profile's counts into rows: sessions (open or create, data calls, close),
    directory listings, and calls with a life of their own.  One seeded random source."""

    def __init__(self, profile: Profile, counts: dict[str, int], seed: int, root: str) -> None:
        self.rng = np.random.default_rng(seed)
        body = profile.body
        ops = body["operations"]
        self.counts = counts
        self.read_size = _sampler(ops.get("read", {}).get("request_size_log2", []), self.rng, 4096)
        self.write_size = _sampler(ops.get("write", {}).get("request_size_log2", []), self.rng, 4096)
        file_size = _sampler(body["namespace"]["file_size_bytes"].get("histogram_log2", []), self.rng, 1 << 20)
        # Exactly the profile's share of consecutive accesses, in a shuffled order (not a coin
        # per access, whose spread would show in a few thousand accesses).
        self.consecutive = {}
        for direction in ("read", "write"):
            n = counts.get(direction, 0)
            flags = np.arange(n) < round(body["sequentiality"][direction]["consecutive_pct"] / 100 * n)
            self.rng.shuffle(flags)
            self.consecutive[direction] = iter(flags.tolist())
        n_dirs = max(1, min(16, body["namespace"]["directories_touched"]))
        self.directories = [f"{root}/d{i}" for i in range(n_dirs)]
        n_files = max(4, min(256, counts.get("read", 0) // 8))
        self.pool = [f"{self.directories[i % n_dirs]}/f{i}" for i in range(n_files)]
        self.sizes = {f: min(MAX_FILE, max(4096, file_size())) for f in self.pool}
        self.out = _Writer()
        self.serial = 0  # makes every new name unique

    def pick(self, names: list[str]) -> str:
        return names[int(self.rng.integers(len(names)))]

    def units(self) -> list[tuple[str, object]]:
        """Sessions and single calls, shuffled: (kind, data calls) or ("single", call)."""
        counts, rng = self.counts, self.rng
        readdirs = counts.get("readdir", 0)
        self.dir_sessions = max(1, min(readdirs, counts.get("open", 0))) if readdirs else 0
        opens, creates = max(0, counts.get("open", 0) - self.dir_sessions), counts.get("create", 0)
        reads = ["read"] * counts.get("read", 0)
        writes = ["write"] * counts.get("write", 0) + ["fsync"] * counts.get("fsync", 0)
        if (reads and not opens) or (writes and not opens + creates):
            opens = 1  # data with nowhere to go in the profile: one session holds it
        # Reads go to files of the tree (a new file has nothing to read); writes to any session.
        rng.shuffle(reads)
        rng.shuffle(writes)
        read_parts = np.array_split(np.array(reads, dtype=object), max(1, opens))
        write_parts = np.array_split(np.array(writes, dtype=object), max(1, opens + creates))
        units: list[tuple[str, object]] = []
        for k in range(opens + creates):
            calls = list(write_parts[k]) + (list(read_parts[k]) if k < opens else [])
            rng.shuffle(calls)
            units.append(("open" if k < opens else "create", calls))
        units += [("opendir", [])] * self.dir_sessions
        for kind in ("stat", "unlink", "mkdir", "rmdir", FILLER, "rename", "link", "symlink"):
            units += [("single", kind)] * counts.get(kind, 0)
        rng.shuffle(units)
        self.listings = iter(np.array_split(np.arange(readdirs), max(1, self.dir_sessions)))
        return units

    def single(self, kind: str) -> None:
        """A call on its own; what it removes, the tree provides (the plan sees it used first)."""
        d = self.pick(self.directories)
        k, self.serial = self.serial, self.serial + 1
        if kind == "stat":
            self.out.add(kind, self.pick(self.pool))
        elif kind == FILLER:
            self.out.add(FILLER, self.pick(self.pool), errno="EINVAL")
        elif kind == "unlink":
            self.out.add("unlink", f"{d}/old{k}")
        elif kind == "rmdir":
            self.out.add("rmdir", f"{d}/empty{k}")
        elif kind == "mkdir":
            self.out.add("mkdir", f"{d}/new{k}")
        elif kind == "rename":
            self.out.add("rename", f"{d}/moving{k}", path2=f"{d}/moved{k}")
        else:  # link, symlink: a new name for a file of the tree
            self.out.add(kind, f"{d}/{kind}{k}", path2=self.pick(self.pool))

    def listing(self) -> str:
        d = self.pick(self.directories)
        self.out.add("open", d)
        for _ in next(self.listings):
            self.out.add("readdir", d, size=32768)
        return d

    def session(self, kind: str, calls: list[str]) -> str:
        """An open (of a file of the tree) or a create, then its data calls in order."""
        if kind == "create":
            target = f"{self.pick(self.directories)}/new-file{self.serial}"
            self.serial += 1
            limit = MAX_FILE
        else:
            target = self.pick(self.pool)
            limit = self.sizes[target]
        self.out.add(kind, target)
        ends = {"read": 0, "write": 0}
        for call in calls:
            if call == "fsync":
                self.out.add("fsync", target)
                continue
            size = min(self.read_size() if call == "read" else self.write_size(), limit)
            offset = self._offset(call, ends[call], size, limit)
            self.out.add(call, target, offset=offset, size=size)
            ends[call] = offset + size
        return target

    def _offset(self, direction: str, end: int, size: int, limit: int) -> int:
        """Consecutive (at the previous end; it may run past the tree's file: the plan sizes
        files to what is read), or an aligned slot of the file anywhere but there."""
        if next(self.consecutive[direction]) and end + size <= MAX_FILE:
            return end
        slots = max(3, (limit - size) // 4096 + 1)
        slot = int(self.rng.integers(slots - 1))
        if end % 4096 == 0 and slot >= end // 4096:
            slot += 1
        return slot * 4096


def synthesize(profile: Profile, *, events: int = 20_000, seed: int = 1, root: str = "/synthetic") -> pa.Table:
    """An event table of about `events` calls with the profile's mix, replayable by fsbm."""
    counts = _counts(profile, events)
    gen = _Generator(profile, counts, seed, root)
    closes_left = counts.get("close", 0)
    for kind, value in gen.units():
        if kind == "single":
            gen.single(value)
            continue
        target = gen.listing() if kind == "opendir" else gen.session(kind, value)
        if closes_left:
            gen.out.add("close", target)
            closes_left -= 1
    for _ in range(closes_left):  # closes with no session left to close: as many readlinks
        gen.out.add(FILLER, gen.pick(gen.pool), errno="EINVAL")
    return gen.out.table()


def write_synthetic(profile: Profile, output: Path, *, events: int = 20_000, seed: int = 1) -> int:
    """The synthetic workload as an event table file (`fsbm replay` runs it); returns its events."""
    table = synthesize(profile, events=events, seed=seed)
    meta = metadata(format="synthetic", sources=profile.body.get("source") or "profile", seed=seed)
    pq.write_table(table.replace_schema_metadata(meta), output)
    return table.num_rows

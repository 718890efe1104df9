"""The characterizer on inputs with known answers: real programs traced for real, and the
third-party captures whose counts SOURCES.md lists."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tarfile
import textwrap
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from fsbm.characterizer import Profile, characterize, characterize_file
from fsbm.characterizer.reuse import stack_distances
from fsbm.traces.ingest import IngestResult, ingest, read_events
from fsbm.traces.record import record
from tests.conftest import SHARED_DATA, run_fsbm

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared


def traced_events(tmp_path: Path, program: str, kept: str = "data.bin") -> pa.Table:
    """The events of `program` run under strace on files whose names hold `kept` (the
    program's own files, not the interpreter loading its libraries)."""
    (tmp_path / "program.py").write_text(textwrap.dedent(program))
    recording = record([sys.executable, "program.py"], tmp_path / "t.strace", cwd=tmp_path)
    assert recording.returncode == 0
    ingest([recording.log], tmp_path / "e.parquet")
    table = read_events(tmp_path / "e.parquet")
    return table.filter([kept in str(f) for f in table["file"].to_pylist()])


def traced_profile(tmp_path: Path, program: str, kept: str = "data.bin") -> Profile:
    """The profile of `program` run under strace, of its events on files whose names hold `kept`."""
    return characterize(traced_events(tmp_path, program, kept))


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(4 << 20))
    return path


def without_durations(counts: dict) -> dict:
    """A class's counts without what the trace timed (tested on its own)."""
    return {k: v for k, v in counts.items() if k not in ("timed", "dur_ns")}


def test_sequential_4k_reads_are_100_percent_sequential(tmp_path: Path, data_file: Path) -> None:
    profile = traced_profile(tmp_path, """
        import os
        fd = os.open("data.bin", os.O_RDONLY)
        while os.read(fd, 4096):
            pass
        os.close(fd)
    """)
    assert profile.tang["reads_sequential_pct"] == 100.0
    assert profile.body["sequentiality"]["read"]["count"] == 1025  # 1024 blocks and the read at EOF
    assert profile.body["runs"]["entire"] == 1


def test_random_preads_are_nearly_never_sequential(tmp_path: Path, data_file: Path) -> None:
    profile = traced_profile(tmp_path, """
        import os, random
        random.seed(5)
        fd = os.open("data.bin", os.O_RDONLY)
        for block in random.sample(range(1024), 1024):
            os.pread(fd, 4096, block * 4096)
        os.close(fd)
    """)
    assert profile.tang["reads_sequential_pct"] < 2.0
    assert profile.body["runs"]["random"] == 1


def test_sorted_lookups_are_forward_reads_with_their_gaps(tmp_path: Path, data_file: Path) -> None:
    """Reads of a sorted random sample of blocks (an SQL IN list): past the last read's end,
    not at it.  They are their own class, with the bytes skipped, which prices them, and
    apart those in a stream: the read before them skipped at most 16 KiB."""
    profile = traced_profile(tmp_path, """
        import os, random
        random.seed(5)
        fd = os.open("data.bin", os.O_RDONLY)
        for block in sorted(random.sample(range(1, 1024), 100)):
            os.pread(fd, 4096, block * 4096)
        os.pread(fd, 4096, 0)
        os.close(fd)
    """)
    blocks = sorted(random.Random(5).sample(range(1, 1024), 100))
    gaps = [(b - a - 1) * 4096 for a, b in zip([-1] + blocks, blocks)]  # the first read counts from 0
    reads = profile.body["classes"]["data"]["read"]
    by_power = Counter(1 << (g.bit_length() - 1) for g in gaps if g > 0)
    in_stream = Counter(1 << (g.bit_length() - 1) for k, g in enumerate(gaps)
                        if g > 0 and k > 0 and 0 <= gaps[k - 1] <= 16384)
    assert in_stream and sum(in_stream.values()) < sum(by_power.values())
    assert without_durations(reads["forward"]["4096"]) == {"count": sum(g > 0 for g in gaps), "bytes": 4096 * sum(g > 0 for g in gaps),
                                        "gap_bytes": sum(gaps),
                                        "gap_log2": {str(lo): n for lo, n in sorted(by_power.items())},
                                        "stream_gap_log2": {str(lo): n for lo, n in sorted(in_stream.items())},
                                        "reread_fraction": 0.0}  # every block read once
    assert reads["sequential"]["4096"]["count"] == sum(g == 0 for g in gaps)
    assert reads["random"]["4096"]["count"] == 1  # back to the start


def test_each_sync_is_told_by_what_it_had_to_make_durable(tmp_path: Path) -> None:
    """SQLite's transaction, in small: a new journal synced, rewritten in place and synced
    again, synced with nothing written, its directory synced after the journal was made
    (and again with nothing new); then a full fsync after a rewrite (its times changed), a
    sync after growing it, a journal made again, and pages of it rewritten apart, each run
    of them and each request counted."""
    (tmp_path / "w").mkdir()
    profile = traced_profile(tmp_path, """
        import os
        fd = os.open("w/journal", os.O_RDWR | os.O_CREAT)
        os.write(fd, b"j" * 8192)
        os.fdatasync(fd)                 # metadata: created and grown
        os.pwrite(fd, b"h" * 512, 0)
        os.fdatasync(fd)                 # data: rewritten in place
        os.fdatasync(fd)                 # clean
        directory = os.open("w", os.O_RDONLY)
        os.fsync(directory)              # directory: the journal was made in it
        os.fsync(directory)              # clean: no entry changed since
        os.pwrite(fd, b"h" * 1000, 100)
        os.fsync(fd)                     # metadata: a full fsync after a write
        os.pwrite(fd, b"j" * 100, 8190)
        os.fdatasync(fd)                 # metadata: grown by 98 bytes
        os.close(fd)
        os.unlink("w/journal")
        fd = os.open("w/journal", os.O_RDWR | os.O_CREAT)
        os.pwrite(fd, b"j" * 4096, 0)
        os.fdatasync(fd)                 # metadata: a new file, though its bytes are below the old one's end
        os.fsync(directory)              # directory: removed and made again
        for block in (2, 3, 0, 6):
            os.pwrite(fd, b"p" * 512, block * 512)
        os.fdatasync(fd)                 # data: rewritten in place, in three runs (blocks 2-3, 0, 6)
        os.close(fd)
        os.close(directory)
    """, kept=str(tmp_path / "w"))
    kinds = profile.body["fsync"]["kinds"]

    def one(nbytes: int, runs: int, requests: int = 1) -> dict[str, int]:
        return {"count": 1, "bytes": nbytes, "runs": runs, "requests": requests}
    none = {"count": 2, "bytes": 0, "runs": 0, "requests": 0}
    assert kinds == {"metadata": {"count": 4, "bytes": 8192 + 1000 + 100 + 4096, "runs": 1 + 1 + 1 + 1,
                                  "requests": 4,
                                  "bytes_log2": {"8192": one(8192, 1), "512": one(1000, 1), "64": one(100, 1),
                                                 "4096": one(4096, 1)}},
                     "data": {"count": 2, "bytes": 512 + 2048, "runs": 1 + 3, "requests": 1 + 4,
                              "bytes_log2": {"512": one(512, 1), "2048": one(2048, 3, requests=4)}},
                     "clean": {**none, "bytes_log2": {"0": none}}, "directory": {**none, "bytes_log2": {"0": none}}}
    assert profile.body["fsync"]["count"] == 10


def test_creates_count_the_files_then_written_and_their_bytes(tmp_path: Path, data_file: Path) -> None:
    """A create whose file is then written (not copied into) counts as written, with the bytes
    written after it, once per file however many writes; an empty create or an existing
    file rewritten does not."""
    profile = traced_profile(tmp_path, """
        import os
        flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY
        for i, size in enumerate((100, 5000, 70000)):
            fd = os.open(f"new{i}.data.bin", flags, 0o644)
            os.write(fd, b"x" * size)
            os.write(fd, b"y" * 10)
            os.close(fd)
        os.close(os.open("empty.data.bin", flags, 0o644))
        src, dst = os.open("data.bin", os.O_RDONLY), os.open("copy.data.bin", flags, 0o644)
        os.copy_file_range(src, dst, 1 << 20)
        os.close(src), os.close(dst)
        fd = os.open("data.bin", os.O_WRONLY)
        os.write(fd, b"z" * 4096)
        os.close(fd)
    """)
    create = profile.body["classes"]["metadata"]["create"]
    assert create["done"] == 5
    assert create["written"] == 3
    assert create["written_bytes"] == 100 + 5000 + 70000 + 3 * 10
    # ... and by power of two of a file's bytes, which a mix of sizes is priced by.
    assert create["written_log2"] == {"64": {"files": 1, "bytes": 110}, "4096": {"files": 1, "bytes": 5010},
                                      "65536": {"files": 1, "bytes": 70010}}
    # The writes into the files made are counted in their classes; the rewrite of data.bin is not.
    writes = profile.body["classes"]["data"]["write"]
    into = {bucket: sum(orders.get(bucket, {}).get("into_created", 0) for orders in writes.values())
            for bucket in ("8", "64", "4096", "65536")}
    assert into == {"8": 3, "64": 1, "4096": 1, "65536": 1}
    assert sum(orders["4096"]["count"] for orders in writes.values() if "4096" in orders) == 2


def test_sequential_writes_inside_what_a_file_held_count_as_rewrites_in_place(tmp_path: Path, data_file: Path) -> None:
    """A log written again from its start after its first pass (SQLite's WAL after a
    checkpoint) rewrites in place: each write that ends within what the file held and
    follows on from its previous write counts as "in_place" in its sequential class, and not
    as a write into a file the workload made.  After a truncate the file holds only what it
    was cut to; a file that existed before the trace, rewritten before anything of it was
    read, counts as extended: the trace cannot tell."""
    profile = traced_profile(tmp_path, """
        import os
        fd = os.open("log.data.bin", os.O_CREAT | os.O_RDWR, 0o644)
        def frames(start, n):
            at = start
            for _ in range(n):
                os.pwrite(fd, b"h" * 24, at)
                os.pwrite(fd, b"p" * 4096, at + 24)
                at += 24 + 4096
        os.pwrite(fd, b"H" * 32, 0)
        frames(32, 3)
        os.fdatasync(fd)
        frames(32, 3)
        os.ftruncate(fd, 0)
        frames(0, 2)
        os.close(fd)
        old = os.open("data.bin", os.O_WRONLY)
        os.pwrite(old, b"z" * 4096, 0)
        os.pwrite(old, b"z" * 4096, 4096)
        os.close(old)
    """)
    writes = profile.body["classes"]["data"]["write"]
    in_place = {bucket: entry["in_place"] for orders in writes.values() for bucket, entry in orders.items()
                if entry.get("in_place")}
    # The second pass's writes but its first, which does not follow on from the one before.
    assert in_place == {"16": 2, "4096": 3}
    into = {bucket: sum(orders.get(bucket, {}).get("into_created", 0) for orders in writes.values())
            for bucket in ("16", "32", "4096")}
    assert into == {"16": 3 + 1 + 2, "32": 1, "4096": 3 + 2}


def test_a_name_made_anew_is_a_new_file_each_time(tmp_path: Path) -> None:
    """SQLite makes its journal anew in every transaction under one name: each time is a file
    of its own, with the bytes written into it then, not one file holding them all; a
    rename counts for the file the name held when it was renamed, and so does a sync
    (a file synced once written is counted apart: it holds no dirty data)."""
    profile = traced_profile(tmp_path, """
        import os
        flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY
        for size in (3000, 3000, 3000, 40000):
            fd = os.open("journal.data.bin", flags, 0o644)
            os.write(fd, b"x" * size)
            if size == 3000:
                os.fdatasync(fd)
            os.close(fd)
            os.unlink("journal.data.bin")
        fd = os.open("tmp.data.bin", flags, 0o644)
        os.write(fd, b"y" * 300)
        os.close(fd)
        os.rename("tmp.data.bin", "kept.data.bin")
        fd = os.open("tmp.data.bin", flags, 0o644)   # the name made anew, written, not renamed
        os.write(fd, b"z" * 5000)
        os.close(fd)
    """)
    create = profile.body["classes"]["metadata"]["create"]
    assert create["done"] == 6 and create["written"] == 6
    assert create["written_log2"] == {"256": {"files": 1, "bytes": 300}, "2048": {"files": 3, "bytes": 9000},
                                      "4096": {"files": 1, "bytes": 5000}, "32768": {"files": 1, "bytes": 40000}}
    assert create["renamed"] == 1 and create["renamed_log2"] == {"256": {"files": 1, "bytes": 300}}
    assert create["synced"] == 3 and create["synced_log2"] == {"2048": {"files": 3, "bytes": 9000}}


def test_files_renamed_into_place_once_written_are_counted_on_their_creates_and_renames(tmp_path: Path) -> None:
    """rsync and git write a file under a temporary name and rename it into place once
    written: those creates count as renamed as well as written, and those renames as renames
    of files just written, both with the bytes written; a rename before the file's last
    write, or of a file the workload did not make, is neither."""
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "there-before").write_text("k")
    profile = traced_profile(tmp_path, """
        import os
        os.chdir("w")
        flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY
        for i, size in enumerate((300, 5000, 70000)):
            fd = os.open(f".part{i}", flags, 0o644)
            os.write(fd, b"x" * size)
            os.close(fd)
            os.rename(f".part{i}", f"whole{i}")
        fd = os.open("early", flags, 0o644)
        os.rename("early", "moved")          # renamed, then written: not into place
        os.write(fd, b"y" * 900)
        os.close(fd)
        os.rename("there-before", "elsewhere")
    """, kept=str(tmp_path / "w"))
    create, rename = (profile.body["classes"]["metadata"][op] for op in ("create", "rename"))
    assert create["written"] == 4 and create["renamed"] == 3 and create["renamed_bytes"] == 75300
    assert create["renamed_log2"] == {"256": {"files": 1, "bytes": 300}, "4096": {"files": 1, "bytes": 5000},
                                      "65536": {"files": 1, "bytes": 70000}}
    assert rename["done"] == 5 and rename["written"] == 3 and rename["written_log2"] == create["renamed_log2"]


def test_a_mapped_region_counts_once_per_process_as_bytes_read_not_as_calls(tmp_path: Path, data_file: Path) -> None:
    """Mapped regions are a data class of their own (one per process and file where the
    mappings overlap), feed the reuse curve as reads, and are no read calls: Tang's table
    and Darshan's counts leave them out."""
    profile = traced_profile(tmp_path, """
        import mmap, os
        fd = os.open("data.bin", os.O_RDONLY)
        whole = mmap.mmap(fd, 0, prot=mmap.PROT_READ)               # 4 MiB
        again = mmap.mmap(fd, 65536, prot=mmap.PROT_READ, offset=1 << 20)  # inside it: no new bytes
        apart = os.open("apart.data.bin", os.O_RDWR | os.O_CREAT, 0o644)
        os.ftruncate(apart, 8 << 20)
        first = mmap.mmap(apart, 65536, prot=mmap.PROT_READ)
        second = mmap.mmap(apart, 65536, prot=mmap.PROT_READ, offset=4 << 20)
        anonymous = mmap.mmap(-1, 1 << 20)
        sum(whole[i] for i in range(0, len(whole), 4096))
        os.pread(fd, 65536, 0)                                        # blocks the mapping brought in
    """)
    mapped = profile.body["classes"]["data"]["mmap"]
    assert set(mapped) == {"random"}
    assert {bucket: c["count"] for bucket, c in mapped["random"].items()} == {str(4 << 20): 1, "65536": 2}
    assert sum(c["bytes"] for c in mapped["random"].values()) == (4 << 20) + 2 * 65536
    assert profile.body["operations"]["read"]["count"] == 1 and profile.body["tang"]["calls"] > 0
    assert profile.body["sequentiality"]["read"]["count"] == 1
    reuse = profile.body["reuse"]
    assert reuse["block_reads"] == 1024 + 2 * 16 + 16
    assert reuse["distinct_blocks"] == 1024 + 2 * 16
    assert reuse["cold_misses"] == 1024 + 2 * 16  # the pread's 16 blocks were mapped before it: hits


def test_unlinks_count_the_files_that_held_data_whoever_wrote_them(tmp_path: Path) -> None:
    """rm removes what another process wrote: the unlinks of files the trace showed holding
    data count (with_data, data_bytes), an empty file's does not, and a file made again
    after an unlink starts empty.  Summarized in parts that split the actors and merged, the
    profile is the same, as a Dask run's must be."""
    from fsbm.characterizer.arrays import subset, to_arrays
    from fsbm.characterizer.partial import finalize, summarize

    table = traced_events(tmp_path, """
        import os, subprocess
        for i, size in enumerate((5000, 70000, 300)):
            with open(f"w{i}.data.bin", "wb") as f:
                f.write(b"x" * size)
        open("empty.data.bin", "wb").close()
        subprocess.run(["rm", "w0.data.bin", "w1.data.bin", "w2.data.bin", "empty.data.bin"], check=True)
        with open("again.data.bin", "wb") as f:
            f.write(b"y" * 4096)
        os.unlink("again.data.bin")
        open("again.data.bin", "wb").close()
        os.unlink("again.data.bin")
    """, ".data.bin")
    unlink = characterize(table).body["classes"]["metadata"]["unlink"]
    assert unlink["done"] == 6
    assert unlink["with_data"] == 4 and unlink["data_bytes"] == 5000 + 70000 + 300 + 4096
    ev = to_arrays(table)
    origin = int(ev.ts.min())
    writer = ev.actor == ev.actor[0]
    parts = [summarize(subset(ev, pick), nfs=False, origin=origin) for pick in (writer, ~writer)]
    assert len({tuple(np.unique(subset(ev, pick).actor)) for pick in (writer, ~writer)}) == 2
    whole = finalize(summarize(ev, nfs=False, origin=origin))
    assert json.dumps(finalize(parts[0].merge(parts[1])), sort_keys=True) == json.dumps(whole, sort_keys=True)


def test_unlinks_count_how_many_directories_saw_how_many_of_them(tmp_path: Path) -> None:
    """rm -rf of a directory of 620 files, and of two of 40 and one of 3 by another rm: the
    profile keeps how many directories saw how many unlinks (to two figures), not their names,
    and summarized in parts that split the two rm processes and merged, the same."""
    from fsbm.characterizer.arrays import OP_INDEX, subset, to_arrays
    from fsbm.characterizer.partial import finalize, summarize

    table = traced_events(tmp_path, """
        import os, subprocess
        for name, files in (("big", 620), ("a/one", 40), ("a/two", 40), ("a/three", 3)):
            os.makedirs(f"tree/{name}")
            for i in range(files):
                open(f"tree/{name}/f{i}", "wb").close()
        subprocess.run(["rm", "-rf", "tree/big"], check=True)
        subprocess.run(["rm", "-rf", "tree/a"], check=True)
    """, "/tree/")
    unlink = characterize(table).body["classes"]["metadata"]["unlink"]
    assert unlink["done"] == 703
    assert unlink["directory_unlinks"] == {"620": 1, "40": 2, "3": 1}
    ev = to_arrays(table)
    origin = int(ev.ts.min())
    one = ev.actor == ev.actor[np.flatnonzero(ev.op == OP_INDEX["unlink"])[-1]]  # the second rm
    parts = [summarize(subset(ev, pick), nfs=False, origin=origin) for pick in (one, ~one)]
    whole = finalize(summarize(ev, nfs=False, origin=origin))
    merged = finalize(parts[0].merge(parts[1]))
    assert merged["classes"]["metadata"]["unlink"] == whole["classes"]["metadata"]["unlink"]
    assert json.dumps(merged, sort_keys=True) == json.dumps(whole, sort_keys=True)


def test_files_only_read_are_kept_by_their_size_and_a_file_written_anywhere_is_not(tmp_path: Path) -> None:
    """cat reads 30 files of 1,000 bytes and 10 of 9,000 whole; a second process appends to
    one of the small ones and reads it again.  The profile keeps the 39 files only read by
    power of two of their bytes (their sizes: each was read to its end), without the one
    written, and summarized in parts that split the two processes and merged, the same: a
    file written in one part and only read in the other was written."""
    from fsbm.characterizer.arrays import OP_INDEX, subset, to_arrays
    from fsbm.characterizer.partial import finalize, summarize

    table = traced_events(tmp_path, """
        import os, subprocess
        os.makedirs("tree")
        for i in range(40):
            with open(f"tree/f{i}", "wb") as f:
                f.write(b"x" * (1000 if i < 30 else 9000))
        names = [f"tree/f{i}" for i in range(40)]
        subprocess.run(["cat", *names], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["sh", "-c", "echo more >> tree/f0 && cat tree/f0 > /dev/null"], check=True)
    """, "/tree/")
    ev = to_arrays(table)
    first_writer = ev.actor[np.flatnonzero(ev.op == OP_INDEX["write"])[0]]
    reading = (ev.actor != first_writer) & (ev.op != OP_INDEX["create"])
    ev = subset(ev, reading)  # the files as the two readers found them
    origin = int(ev.ts.min())
    whole = finalize(summarize(ev, nfs=False, origin=origin))
    assert whole["runs"]["read_files_log2"] == {"512": {"files": 29, "bytes": 29_000},
                                                "8192": {"files": 10, "bytes": 90_000}}
    appender = ev.actor == ev.actor[np.flatnonzero(ev.op == OP_INDEX["write"])[-1]]
    parts = [summarize(subset(ev, pick), nfs=False, origin=origin) for pick in (appender, ~appender)]
    assert json.dumps(finalize(parts[0].merge(parts[1])), sort_keys=True) == json.dumps(whole, sort_keys=True)


def test_an_untar_creates_exactly_the_trees_files(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    rng = random.Random(3)
    files = 0
    for d in range(7):
        (tree / f"dir{d}" / "sub").mkdir(parents=True)
        for f in range(rng.randrange(5, 30)):
            (tree / f"dir{d}" / ("sub" if f % 3 else "") / f"file{f}.txt").write_bytes(os.urandom(rng.randrange(1, 9000)))
            files += 1
    with tarfile.open(tmp_path / "tree.tar", "w") as tar:
        tar.add(tree, arcname="tree")
    out = tmp_path / "out"
    out.mkdir()
    recording = record(["tar", "-xf", str(tmp_path / "tree.tar"), "-C", str(out)], tmp_path / "t.strace")
    assert recording.returncode == 0
    ingest([recording.log], tmp_path / "e.parquet")
    profile = characterize_file(tmp_path / "e.parquet")
    assert profile.body["operations"]["create"]["count"] == files
    assert profile.body["operations"]["mkdir"]["count"] == 1 + 7 * 2  # tree/, dirN/, dirN/sub/


def test_reads_made_between_other_calls_are_told_from_reads_back_to_back(tmp_path: Path) -> None:
    """tar reads its archive between the files it writes (readahead works meanwhile); cat
    reads it back to back.  The sequential reads keep how many came after other calls in
    the workload since the stream's previous read (sequence.c: interleaved)."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for f in range(40):
        (tree / f"file{f}.bin").write_bytes(os.urandom(20_000 + 1000 * f))
    with tarfile.open(tmp_path / "tree.tar", "w") as tar:
        tar.add(tree, arcname="tree")
    (tmp_path / "out").mkdir()
    reads = {}
    for name, command in (("tar", ["tar", "-xf", "tree.tar", "-C", "out"]), ("cat", ["sh", "-c", "cat tree.tar >/dev/null"])):
        recording = record(command, tmp_path / f"{name}.strace", cwd=tmp_path)
        assert recording.returncode == 0
        ingest([recording.log], tmp_path / f"{name}.parquet")
        profile = characterize_file(tmp_path / f"{name}.parquet", scope=str(tmp_path))
        reads[name] = [c for bucket, c in profile.body["classes"]["data"]["read"]["sequential"].items() if bucket != "0"]
    tar_reads = sum(c["count"] for c in reads["tar"])
    assert tar_reads > 100 and sum(c["interleaved"] for c in reads["tar"]) >= 0.9 * (tar_reads - 1)
    assert sum(c["count"] for c in reads["cat"]) > 5 and sum(c["interleaved"] for c in reads["cat"]) == 0


def test_reads_that_resume_a_stream_after_a_gap_are_told_from_reads_in_a_run(tmp_path: Path) -> None:
    """SQLite's sorted point lookups read a leaf page, skip ahead, and sometimes read the page
    right after the one they read: such a read resumes a stream (sequence.c: resumes), with
    no run of reads before it that readahead could have grown along.  cat reads the same
    file front to back, and none of its reads does."""
    database = tmp_path / "big.db"
    subprocess.run(["sqlite3", str(database), "PRAGMA page_size=4096; CREATE TABLE t(id INTEGER PRIMARY KEY, p BLOB);"
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) "
                    "INSERT INTO t SELECT i, randomblob(1000) FROM n;"], check=True)
    ids = random.Random(3).sample(range(1, 20001), 1500)
    (tmp_path / "q.sql").write_text(f"SELECT sum(length(p)) FROM t WHERE id IN ({','.join(map(str, ids))});\n")
    sequential = {}
    for name, command in (("sqlite", ["sqlite3", "-readonly", "big.db", ".read q.sql"]), ("cat", ["cat", "big.db"])):
        recording = record(command, tmp_path / f"{name}.strace", cwd=tmp_path, quiet=True)
        assert recording.returncode == 0
        ingest([recording.log], tmp_path / f"{name}.parquet")
        profile = characterize_file(tmp_path / f"{name}.parquet", scope=str(tmp_path))
        sequential[name] = profile.body["classes"]["data"]["read"]["sequential"]
    pages = sequential["sqlite"]["4096"]
    assert 20 < pages["resumes"] < pages["count"]  # the first read of the file starts it, resuming nothing
    assert all(c.get("resumes", 0) == 0 for c in sequential["cat"].values())
    assert sum(c["count"] for c in sequential["cat"].values()) > 100


def test_sqlite_journal_writes_straddle_pages_and_its_database_writes_do_not(tmp_path: Path) -> None:
    """A rollback journal's record is a 4-byte page number, the page and a 4-byte checksum
    after a 512-byte header, so each page it journals is written across a page boundary;
    the database's own pages are written where they lie (classes.py: straddles)."""
    database = tmp_path / "db.sqlite"
    subprocess.run(["sqlite3", str(database), "PRAGMA page_size=4096; CREATE TABLE t(id INTEGER PRIMARY KEY, p BLOB);"
                    "INSERT INTO t SELECT value, randomblob(3000) FROM generate_series(1, 200);"], check=True)
    script = "PRAGMA journal_mode=DELETE; BEGIN; UPDATE t SET p = randomblob(3000) WHERE id % 2 = 0; COMMIT;"
    recording = record(["sqlite3", str(database), script], tmp_path / "t.strace", cwd=tmp_path, quiet=True)
    assert recording.returncode == 0
    ingest([recording.log], tmp_path / "e.parquet")
    table = read_events(tmp_path / "e.parquet")
    pages = {}
    for name in ("db.sqlite-journal", "db.sqlite"):
        keep = [str(f).endswith(name) for f in table["file"].to_pylist()]
        writes = characterize(table.filter(keep)).body["classes"]["data"]["write"]
        pages[name] = [c for order in writes.values() for bucket, c in order.items() if bucket == "4096"]
    journal, db = pages["db.sqlite-journal"], pages["db.sqlite"]
    assert sum(c["count"] for c in journal) >= 90 and all(c.get("straddles") == c["count"] for c in journal)
    assert sum(c["count"] for c in db) >= 90 and all(c.get("straddles", 0) == 0 for c in db)


def test_a_request_straddles_only_where_it_crosses_a_page_boundary_it_need_not() -> None:
    import pyarrow as pa

    from fsbm.traces.schema import EVENT_SCHEMA, metadata

    def straddles(offset: int, length: int) -> int:
        """The straddling writes the profile counts for one write of `length` bytes at `offset`."""
        table = pa.table({"seq": [0], "ts": [1_000], "dur": [500], "actor": ["1"], "op": ["write"],
                          "orig": ["pwrite64"], "file": ["/w/f"], "path": pa.nulls(1, pa.string()),
                          "path2": pa.nulls(1, pa.string()), "offset": [offset], "size": [length], "ret": [length],
                          "errno": pa.nulls(1, pa.string()), "record": [0]})
        profile = characterize(table.cast(EVENT_SCHEMA).replace_schema_metadata(metadata(format="synthetic")))
        return sum(bucket.get("straddles", 0) for order in profile.body["classes"]["data"]["write"].values()
                   for bucket in order.values())

    offset = [0, 516, 8192, 4000, 4000, 0, 100, 4096, 10240, 10]
    length = [4096, 4096, 4096, 96, 97, 8192, 8192, 0, 10240, 4]
    assert [straddles(o, n) for o, n in zip(offset, length)] == [0, 1, 0, 0, 1, 0, 1, 0, 0, 0]


def test_a_listing_keeps_the_bytes_of_entries_its_getdents_returned(tmp_path: Path) -> None:
    """The predictor prices a getdents64 by the bytes it returned; the kernel's record for a
    name is 19 bytes of header, the name and its NUL, padded to 8 (filldir64), the same on
    every filesystem."""
    listed = tmp_path / "listed"
    listed.mkdir()
    names = [f"entry-{i:03d}" + "x" * (i % 11) for i in range(40)]
    for name in names:
        (listed / name).touch()
    recording = record(["ls", "-f", str(listed)], tmp_path / "t.strace", quiet=True)
    assert recording.returncode == 0
    ingest([recording.log], tmp_path / "e.parquet")
    table = read_events(tmp_path / "e.parquet")
    keep = [str(f).endswith("/listed") for f in table["file"].to_pylist()]
    readdir = characterize(table.filter(keep)).body["classes"]["metadata"]["readdir"]
    expected = sum((19 + len(name) + 1 + 7) // 8 * 8 for name in [".", "..", *names])
    assert readdir.pop("timed") == 2 and readdir.pop("dur_ns") > 0  # the two getdents64, timed by strace -T
    assert readdir == {"done": 1, "failed": 0, "empty": 1, "listed_bytes": expected}


def test_each_class_keeps_the_durations_the_trace_gave_its_calls(tmp_path: Path, data_file: Path) -> None:
    """The summed strace -T durations of a class's calls, against the log's own lines."""
    import re

    copy = tmp_path / "copy.bin"
    program = (f"import os\nsrc = os.open({str(data_file)!r}, os.O_RDONLY)\n"
               f"dst = os.open({str(copy)!r}, os.O_WRONLY | os.O_CREAT, 0o644)\n"
               "while True:\n    chunk = os.read(src, 65536)\n    if not chunk: break\n    os.write(dst, chunk)\n"
               "os.fsync(dst)\n")
    recording = record([sys.executable, "-c", program], tmp_path / "t.strace", quiet=True)
    assert recording.returncode == 0
    durations: dict[str, list[int]] = {"read": [], "write": [], "fsync": []}
    call = re.compile(r"^\d+\s+[\d.]+\s+(read|write|fsync)\((\d+)<([^>]*)>.* <(\d+)\.(\d{6})>$")
    for line in recording.log.read_text().splitlines():
        found = call.match(line)
        if found and found.group(3) in (str(data_file), str(copy)):
            durations[found.group(1)].append(int(found.group(4)) * 10**9 + int(found.group(5)) * 1000)
    table = ingest([recording.log], tmp_path / "e.parquet").output
    profile = characterize_file(table, scope=str(tmp_path)).body
    classes = profile["classes"]
    for op in ("read", "write"):
        counted = [c for buckets in classes["data"].get(op, {}).values() for c in buckets.values()]
        assert sum(c.get("timed", 0) for c in counted) == len(durations[op]) > 10
        assert sum(c.get("dur_ns", 0) for c in counted) == sum(durations[op])
    assert classes["metadata"]["fsync"]["timed"] == 1
    assert classes["metadata"]["fsync"]["dur_ns"] == sum(durations["fsync"]) > 0
    from fsbm.documents import Profile as ProfileDocument

    observed = ProfileDocument.of(profile).classes.observed_ns()
    assert observed["read"] == (len(durations["read"]), sum(durations["read"]))


def test_the_nfsv3_capture_gives_the_counts_sources_lists(whole_table: Callable[..., IngestResult]) -> None:
    capture = SHARED_DATA / "nfs" / "epam-nfstrace" / "eth-ipv4-tcp-nfsv3.pcap.bz2"
    if not capture.exists():
        pytest.fail("shared data missing") if os.environ.get("CI") == "true" else pytest.skip("no shared data")
    body = characterize_file(whole_table(capture).output).to_json()
    assert body["original_calls"]["NFS3.WRITE"]["count"] == 3200
    assert body["operations"]["write"]["request_sizes"]["10K-100K"] == 3200  # all 32 KiB
    assert body["sequentiality"]["write"]["consecutive"] == 3200  # 3190 + the 10 first at offset 0
    assert body["tang"]["create_pct"] == pytest.approx(100 * 10 / 3331)
    assert body["tang"]["lookup_pct"] == pytest.approx(100 * 20 / 3331)
    assert body["open_files"]["definition"].startswith("NFS has no open")
    assert body["timeline"]["processes"] > 0 and body["timeline"]["same_host_clients"] == 0  # clients apart
    # Each READDIRPLUS is a listing to price, not the empty getdents that ends one (all 30
    # were once counted empty and priced at nothing), and it lists what its reply names, as
    # getdents64 records: tshark shows "." and ".." (24 bytes each) in all 30 replies and
    # "temp.file" (32) in 10 of them.
    assert without_durations(body["classes"]["metadata"]["readdir"]) == {"done": 30, "failed": 0, "empty": 0,
                                                      "listed_bytes": 30 * 2 * 24 + 10 * 32}


def test_stack_distances_are_mattsons() -> None:
    keys = np.array([1, 2, 3, 1, 2, 2, 4, 1])
    # 1 after {2,3}: 2; 2 after {3,1}: 2; 2 again: 0; 1 after {2,4}: 2
    assert stack_distances(keys).tolist() == [-1, -1, -1, 2, 2, 0, -1, 2]


def test_stack_distances_equal_an_lru_stacks_across_many_words_of_marks() -> None:
    # The marks are counted 64 positions to a word: references whose previous one lies in
    # the same word, the word before, or hundreds of words back, against a list kept as an
    # LRU stack (the distance is the key's depth in it).
    rng = np.random.default_rng(7)
    keys = np.concatenate([rng.integers(0, 40, 3000), rng.integers(0, 3000, 3000), np.arange(500) % 70])
    stack: list[int] = []
    expected = []
    for key in keys.tolist():
        expected.append(stack.index(key) if key in stack else -1)
        if key in stack:
            stack.remove(key)
        stack.insert(0, key)
    assert stack_distances(keys).tolist() == expected


def test_a_re_read_file_hits_once_the_cache_holds_it(tmp_path: Path, data_file: Path) -> None:
    profile = traced_profile(tmp_path, """
        import os
        for _ in range(2):
            fd = os.open("data.bin", os.O_RDONLY)
            while os.read(fd, 65536):
                pass
            os.close(fd)
    """)
    reuse = profile.body["reuse"]
    assert reuse["distinct_blocks"] == 1024
    full = [p for p in reuse["points"] if p["cache_blocks"] >= 1024]
    small = [p for p in reuse["points"] if p["cache_blocks"] < 1023]
    assert full[0]["hit_fraction"] == pytest.approx(0.5)  # the second pass hits, all of it
    assert all(p["hit_fraction"] == 0.0 for p in small)  # LRU, looping over more than fits: nothing hits


def test_checkpoints_repeat_the_statistics_every_n_events(tmp_path: Path, data_file: Path) -> None:
    (tmp_path / "program.py").write_text(textwrap.dedent("""
        import os
        fd = os.open("data.bin", os.O_RDONLY)
        while os.read(fd, 4096):
            pass
        os.close(fd)
    """))
    recording = record([sys.executable, "program.py"], tmp_path / "t.strace", cwd=tmp_path)
    ingest([recording.log], tmp_path / "e.parquet")
    profile = characterize_file(tmp_path / "e.parquet", every=500)
    checkpoints = profile.body["checkpoints"]
    assert sum(c["events"] for c in checkpoints) == profile.body["events"]
    assert all("tang" in c for c in checkpoints)


def test_the_cli_prints_tangs_table_stores_and_writes_json(tmp_path: Path, fsbm_home: Path) -> None:
    log = SHARED_DATA / "strace" / "cmatthew_gcc.txt"
    if not log.exists():
        pytest.skip("no shared data")
    out = tmp_path / "p.json"
    done = run_fsbm("characterize", str(log), "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert "read calls" in done.stdout and "profile 1 stored" in done.stdout
    told = " ".join(done.stdout.split())
    assert "events, profiled whole in memory (about 0.2 MiB" in told  # which way, and why
    assert f"{log}: 1," in told and "events.parquet" not in told  # named as given, not by its parsed table
    body = json.loads(out.read_text())
    assert body["kind"] == "profile" and body["schema_version"] == 3
    assert Profile.load(out).tang["calls"] > 0


def test_open_files_are_time_weighted_and_ignore_closes_of_unseen_opens() -> None:
    import pyarrow as pa

    from fsbm.characterizer.arrays import to_arrays
    from fsbm.characterizer.characterize import characterize
    from fsbm.traces.schema import EVENT_SCHEMA

    rows = [("close", "/a", 0), ("open", "/a", 10), ("open", "/b", 20), ("close", "/a", 30), ("open", "/a", 40),
            ("close", "/b", 60), ("close", "/a", 70)]
    n = len(rows)
    table = pa.table({
        "seq": list(range(n)), "ts": [r[2] * 10**9 for r in rows], "dur": [0] * n, "actor": ["1"] * n,
        "op": [r[0] for r in rows], "orig": [r[0] for r in rows], "file": [r[1] for r in rows], "path": [None] * n,
        "path2": [None] * n, "offset": [None] * n, "size": [None] * n, "ret": [3] * n, "errno": [None] * n,
        "record": list(range(n)),
    }).cast(EVENT_SCHEMA)
    result = characterize(to_arrays(table)).body["open_files"]
    # levels 0,1,2,1,2,1 over 10,10,10,10,20,10 s: the close at t=0 closed nothing we saw open
    assert result["mean"] == pytest.approx(90 / 70) and result["max"] == 2


MIXED = """
    import os, random
    random.seed(11)
    fd = os.open("data.bin", os.O_RDWR)
    blocks = (4 << 20) // 4096
    pos = 0
    for i in range(3000):
        if random.random() < 0.7:              # 70% reads, mostly sequential 4 KiB
            if random.random() < 0.2:
                pos = random.randrange(blocks) * 4096
            n = len(os.pread(fd, 4096, pos))
            pos = (pos + 4096) % (4 << 20)
        else:                                  # 30% writes, random 16 KiB
            os.pwrite(fd, b"w" * 16384, random.randrange(blocks - 4) * 4096)
    os.close(fd)
"""


def test_the_fio_job_reproduces_the_data_mix_when_traced(tmp_path: Path, data_file: Path) -> None:
    """Trace a program, export its profile as fio, trace fio running it: the mix comes back."""
    from fsbm.characterizer.fio_job import fio_job

    original = traced_profile(tmp_path, MIXED)
    work = tmp_path / "fio-files"
    work.mkdir()
    job = tmp_path / "w.fio"
    job.write_text(fio_job(original, str(work)))
    subprocess.run(["fio", "--create_only=1", str(job)], check=True, capture_output=True)  # layout, untraced
    recording = record(["fio", "--output=/dev/null", str(job)], tmp_path / "fio.strace")
    assert recording.returncode == 0
    ingest([recording.log], tmp_path / "fio.parquet")
    table = read_events(tmp_path / "fio.parquet")
    keep = [str(f).startswith(str(work)) for f in table["file"].to_pylist()]
    replayed = characterize(table.filter(keep))
    a, b = original.to_json(), replayed.to_json()
    share = lambda p: 100 * p["operations"]["read"]["count"] / (p["operations"]["read"]["count"] +  # noqa: E731
                                                                  p["operations"]["write"]["count"])
    assert abs(share(a) - share(b)) <= 5
    assert abs(a["tang"]["reads_sequential_pct"] - b["tang"]["reads_sequential_pct"]) <= 5
    assert abs(a["tang"]["writes_sequential_pct"] - b["tang"]["writes_sequential_pct"]) <= 5


@pytest.mark.parametrize("log", ["arastoob_multithread_strace1.log", "davidfoliveira_strace.txt"])
def test_the_sequence_kernel_agrees_with_a_plain_walk(tmp_path: Path, log: str) -> None:
    """The C pass (sequence.c) against the definition written out in Python, on real logs."""
    from fsbm.characterizer.arrays import MISSING, OP_INDEX, costed, to_arrays
    from fsbm.characterizer.sequentiality import classify

    ingest([SHARED_DATA / "strace" / log], tmp_path / "e.parquet", keep_going=True)
    ev = to_arrays(read_events(tmp_path / "e.parquet"))
    acc = classify(ev, nfs=False)
    ends: dict[tuple[int, int], list[int]] = {}
    runs: dict[tuple[int, int], int] = {}
    calls: Counter = Counter()  # costed calls so far, per actor
    calls_then: dict[tuple[int, int], int] = {}  # the actor's, up to the run's last access
    expected, interleaved, resumes, in_stream = [], [], [], []
    per_run: list[dict[str, int]] = []  # reads, writes, broken, end, file
    file_size: Counter = Counter()
    gapped: dict[tuple[int, int], list[bool]] = {}  # per direction: the last access since the open was not consecutive
    streamed: dict[tuple[int, int], list[bool]] = {}  # per direction: the last access since the open skipped <= 16 KiB
    counted = costed(ev)
    for i in range(ev.n):  # strace: trace order is time order
        group, op = (int(ev.actor[i]), int(ev.file[i])), int(ev.op[i])
        before = calls[group[0]]
        calls[group[0]] += int(counted[i])
        if op in (OP_INDEX["open"], OP_INDEX["create"]):
            ends[group] = [0, 0]
            gapped[group] = [False, False]
            streamed[group] = [False, False]
            runs.pop(group, None)
            calls_then.pop(group, None)
        elif op in (OP_INDEX["read"], OP_INDEX["write"]) and ev.offset[i] != MISSING and not ev.failed[i]:
            last = ends.setdefault(group, [0, 0])
            d = int(op == OP_INDEX["write"])
            length = ev.ret[i] if ev.ret[i] >= 0 else (ev.size[i] if ev.size[i] != MISSING else 0)
            expected.append((i, ev.offset[i] == last[d], ev.offset[i] >= last[d], ev.offset[i] + length,
                             ev.offset[i] - last[d]))
            skipped = gapped.setdefault(group, [False, False])
            resumes.append(bool(ev.offset[i] == last[d] and skipped[d]))
            skipped[d] = bool(ev.offset[i] != last[d])
            near = streamed.setdefault(group, [False, False])
            in_stream.append(near[d])
            near[d] = bool(0 <= ev.offset[i] - last[d] <= 16384)
            last[d] = ev.offset[i] + length
            interleaved.append(group in calls_then and before > calls_then[group])
            calls_then[group] = calls[group[0]]
            if group not in runs:
                runs[group] = len(per_run)
                per_run.append({"reads": 0, "writes": 0, "broken": 0})
            run = per_run[runs[group]]
            run["reads" if d == 0 else "writes"] += 1
            run["broken"] |= int(expected[-1][1] == 0)
            run.update(end=int(last[d]), file=group[1])
            file_size[group[1]] = max(file_size[group[1]], int(last[d]))
    assert len(expected) > 100
    assert [int(i) for i in acc.index] == [e[0] for e in expected]
    assert acc.flag("consecutive").tolist() == [e[1] for e in expected]
    assert acc.flag("sequential").tolist() == [e[2] for e in expected]
    assert acc.gap.tolist() == [e[4] for e in expected]
    got = acc.runs
    assert got.counts == {"count": len(per_run), "all_consecutive": sum(not r["broken"] for r in per_run),
                          "read_only": sum(r["writes"] == 0 for r in per_run),
                          "write_only": sum(r["reads"] == 0 for r in per_run),
                          "read_write": sum(r["reads"] > 0 and r["writes"] > 0 for r in per_run)}
    assert {f: s for f, s in enumerate(got.file_size.tolist()) if s} == {f: s for f, s in file_size.items() if s}
    whole = Counter(r["file"] for r in per_run if not r["broken"] and r["end"] >= file_size[r["file"]])
    assert {f: n for f, n in enumerate(got.entire.tolist()) if n} == dict(whole) and whole
    assert acc.flag("interleaved").tolist() == interleaved and 0 < sum(interleaved) < len(interleaved)
    assert acc.flag("resumes").tolist() == resumes
    assert acc.flag("in_stream").tolist() == in_stream and any(in_stream)


def test_a_profiles_recording_adds_its_logs_times_and_keeps_a_flag_only_where_every_log_set_it() -> None:
    """characterizer.partial.recording_totals: a trace of several logs adds their CPU times,
    the runs without syncs' among them, only where every log has them (a total missing one
    program's would look whole), and says the syncs were skipped only where every log's
    runs skipped them: the predictor then leaves the syncs' CPU out of what it subtracts."""
    from fsbm.characterizer.partial import recording_totals

    base = {"user_cpu_ns": 10, "system_cpu_ns": 5, "wall_ns": 20, "traced_wall_ns": 30}
    first = {**base, "untraced_nosync_user_cpu_ns": 3, "untraced_nosync_system_cpu_ns": 4,
             "untraced_calls_cpu_syncs_skipped": True, "untraced_warm_syncs_skipped": True}
    second = {**first, "untraced_warm_syncs_skipped": False}
    totals = recording_totals([first, second])
    assert (totals["untraced_nosync_user_cpu_ns"], totals["untraced_nosync_system_cpu_ns"]) == (6, 8)
    assert totals["untraced_calls_cpu_syncs_skipped"] is True and totals["untraced_warm_syncs_skipped"] is False
    partial = recording_totals([first, base])
    assert "untraced_nosync_user_cpu_ns" not in partial and "untraced_calls_cpu_syncs_skipped" not in partial
    # Traces characterized together: times add up, a flag holds where each trace's holds.
    from fsbm.counts import added_counts

    merged = added_counts(recording_totals([first]), recording_totals([second]))
    assert merged["untraced_nosync_user_cpu_ns"] == 6 and merged["untraced_calls_cpu_syncs_skipped"] is True
    assert merged["untraced_warm_syncs_skipped"] is False


def test_calls_on_devices_proc_sys_and_pipes_are_left_out_and_counted(tmp_path: Path) -> None:
    # Reads of /dev/urandom (git makes thousands), /proc and /sys, and writes to /dev/null,
    # are no filesystem's data: the workload is the one real file written.
    recording = record(["sh", "-c", "head -c 65536 /dev/urandom > /dev/null; cat /proc/self/status > /dev/null; "
                                    "cat /sys/kernel/mm/transparent_hugepage/enabled > /dev/null 2>&1; "
                                    "echo hello | cat > out.txt"], tmp_path / "t.strace", cwd=tmp_path)
    assert recording.returncode == 0
    ingest([recording.log], tmp_path / "e.parquet")
    table = read_events(tmp_path / "e.parquet")
    profile = characterize(table)
    left_out = profile.body["left_out"]["calls"]
    on_devices = sum(f.startswith("/dev/") for f in table["file"].to_pylist())
    assert left_out["devices (/dev)"] == on_devices > 0
    assert left_out["/proc"] > 0
    assert profile.body["events"] == table.num_rows - sum(left_out.values())
    # What is left is priced as the filesystem's: no class counts a read of /dev/urandom.
    reads = profile.body["classes"]["data"].get("read", {})
    assert sum(c["bytes"] for order in reads.values() for c in order.values()) < 65536


def _shared_traces() -> list[Path]:
    if not SHARED_DATA.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{SHARED_DATA} is missing; CI runs with shared/ beside the clone")
        pytest.skip("shared data not present")
    return [*sorted((SHARED_DATA / "strace").iterdir()),
            *sorted((SHARED_DATA / "nfs" / "epam-nfstrace").glob("*.pcap.bz2")),
            SHARED_DATA / "nfs" / "ellard-text" / "ellard-raw-data.txt"]


@pytest.mark.slow(seconds=2)
@pytest.mark.parametrize("trace", _shared_traces(), ids=lambda p: p.name)
def test_every_profiles_fio_job_is_one_fio_accepts(trace: Path, tmp_path: Path, whole_table: Callable[..., IngestResult]) -> None:
    # Issue 36: a write-only profile's job said a bare "randwrite", which fio drops.
    from fsbm.characterizer.fio_job import fio_job

    events = whole_table(trace, keep_going=True).output
    profile = characterize_file(events)
    ops = profile.to_json()["operations"]
    if not ops.get("read", {}).get("count") and not ops.get("write", {}).get("count"):
        with pytest.raises(ValueError, match="no reads or writes"):
            fio_job(profile, str(tmp_path))
        return
    job = tmp_path / "w.fio"
    job.write_text(fio_job(profile, str(tmp_path / "files")))
    done = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True)
    assert done.returncode == 0 and "Bad option" not in done.stderr and "dropped" not in done.stderr, done.stderr


def test_files_read_after_they_were_written_start_their_streams_in_the_cache(tmp_path: Path) -> None:
    """A real program unpacks-then-reads: it reads one file nothing wrote (its first read
    misses) and 40 files it wrote moments before (their first reads hit).  The reuse curve
    says so per file, and the model prices one cold stream start, not the workload's miss
    fraction spread over all 41."""
    from fsbm.documents import Profile as ProfileDocument
    from fsbm.predictor.model import first_read_hit_fraction, hit_fraction

    work = tmp_path / "work"
    work.mkdir()
    (work / "archive.bin").write_bytes(os.urandom(4 << 20))
    script = ("import os\ndata = open('archive.bin', 'rb').read()\n"
              "for i in range(40):\n    open(f'f{i}', 'wb').write(data[i * 65536:(i + 1) * 65536])\n"
              "for i in range(40):\n    open(f'f{i}', 'rb').read()\n")
    recording = record([sys.executable, "-S", "-c", script], tmp_path / "t.strace", cwd=work, scope=work)
    assert recording.returncode == 0
    ingest([recording.log], tmp_path / "e.parquet")
    profile = ProfileDocument.of(characterize_file(tmp_path / "e.parquet").to_json())
    reuse = profile.reuse
    assert reuse.first_reads == 41 and reuse.first_reads_cold == 1
    assert first_read_hit_fraction(reuse, 1 << 30) == pytest.approx(40 / 41)
    # Overall, the archive's 4 MiB of cold reads are half the reads: no guide to the files' first reads.
    assert hit_fraction(reuse, 1 << 30) < 0.6
    assert first_read_hit_fraction(reuse, 4096) < 0.1  # a one-page cache holds none of them
    assert first_read_hit_fraction(reuse, 1 << 30, "warm") == 1.0
    # A profile made before the curve kept first reads prices them as before.
    old = reuse.model_copy(update={"first_reads": 0})
    assert first_read_hit_fraction(old, 1 << 30) is None


def test_each_read_class_keeps_its_own_share_of_re_reads(tmp_path: Path, data_file: Path) -> None:
    """A real program reads a small file's pages again and again, then 300 random pages of a
    4 MiB file once each (as Python reads its libraries, then a program's data).  The
    workload's hit fraction is the small file's, most of all reads; each read class says its
    own, and the model prices the random reads cold: where every class took the workload's
    share, two thirds of them were priced as cache hits."""
    from fsbm.documents import Profile as ProfileDocument
    from fsbm.predictor.model import hit_fraction, reread_share

    (tmp_path / "data-small.bin").write_bytes(os.urandom(2048))
    profile = traced_profile(tmp_path, """
        import os, random
        small = os.open("data-small.bin", os.O_RDONLY)
        for _ in range(600):
            os.pread(small, 2048, 0)
        big = os.open("data.bin", os.O_RDONLY)
        for block in random.Random(3).sample(range(1024), 300):
            os.pread(big, 4096, block * 4096)
    """, kept="data")
    document = ProfileDocument.of(profile.to_json())
    reads = document.classes.data["read"]
    big_reads = [reads[order]["4096"] for order in ("random", "forward") if "4096" in reads.get(order, {})]
    assert sum(c.count for c in big_reads) == 300 and all(c.reread_fraction == 0.0 for c in big_reads)
    small_reads = [c for order in reads.values() for bucket, c in order.items() if bucket == "2048"]
    assert sum(c.count for c in small_reads) == 600
    assert sum(c.count * c.reread_fraction for c in small_reads) == pytest.approx(599)  # all but the first
    assert hit_fraction(document.reuse, 1 << 30) == pytest.approx(599 / 900)
    assert reread_share(document.reuse, 1 << 30) == pytest.approx(1.0)  # a cache of 1 GiB holds every re-read
    assert reread_share(document.reuse, 1 << 30, "warm") is None
    assert "class_reads" not in profile.to_json()["reuse"]  # the counts went to the classes

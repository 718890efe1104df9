"""Real third-party strace logs (../shared/data/strace, read at run time).

Every path-based call that completed is exactly one event: the parser's counts per
syscall equal an independent count of the log's lines.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from fsbm.traces.ingest import ingest, read_events
from tests.conftest import SHARED_DATA

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

STRACE_DIR = SHARED_DATA / "strace"
PATH_CALLS = {"open", "openat", "creat", "stat", "lstat", "stat64", "lstat64", "access", "faccessat", "mkdir",
              "rmdir", "unlink", "unlinkat", "rename", "renameat", "readlink", "chmod", "chown"}
# "[pid N] " or "N  ", then an optional -t/-tt/-ttt stamp, then "name(" or "<... name resumed>"
_LINE = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(?:[\d:.]+\s+)?(?:<\.\.\. (\w+) resumed>|(\w+)\()")


def logs() -> list[Path]:
    if not STRACE_DIR.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{STRACE_DIR} is missing; CI runs with shared/ beside the clone")
        pytest.skip("shared data not present")
    return sorted(STRACE_DIR.iterdir())


def independent_counts(path: Path) -> Counter[str]:
    """Completed calls per name: a call line, or the resumed half of an unfinished one."""
    counts: Counter[str] = Counter()
    for raw in path.read_text(errors="replace").splitlines():
        line = raw.rstrip()
        if line.endswith("<unfinished ...>") or line.endswith("<detached ...>"):
            continue
        match = _LINE.match(line)
        if match and " = " in line and "ERESTART" not in line:
            counts[match.group(1) or match.group(2)] += 1
    return counts


@pytest.mark.parametrize("log", logs(), ids=lambda p: p.name)
def test_path_calls_counted_once_each(log: Path, tmp_path: Path) -> None:
    result = ingest([log], tmp_path / "events.parquet", keep_going=True)
    assert result.stats.bad_lines <= 1  # the clamav log ends mid-call
    events = read_events(tmp_path / "events.parquet").to_pandas()
    ours = Counter(events[events["orig"].isin(PATH_CALLS)]["orig"])
    theirs = independent_counts(log)
    expected = {name: n for name, n in theirs.items() if name in PATH_CALLS}
    assert dict(ours) == expected


def test_the_asterisk_log_pairs_thousands_of_unfinished_calls(tmp_path: Path) -> None:
    log = STRACE_DIR / "zicada_asterisk_strace.log"
    result = ingest([log], tmp_path / "events.parquet")
    text = log.read_text()
    assert text.count("<unfinished ...>") > 4000
    # Every resumed half found its start, but for calls in flight when strace attached.
    assert result.stats.resumed_without_start < 20
    assert result.stats.bad_lines == 0


def test_hex_escaped_paths_are_decoded(tmp_path: Path) -> None:
    ingest([STRACE_DIR / "morenbach_ls_strace.txt"], tmp_path / "e.parquet")
    files = set(read_events(tmp_path / "e.parquet").to_pandas()["file"])
    assert "/etc/ld.so.cache" in files


def test_one_process_then_many_keeps_the_first_processes_descriptors(tmp_path: Path) -> None:
    """strace -f prints no pid until a second process exists; the first one keeps its fds."""
    ingest([STRACE_DIR / "davidfoliveira_strace.txt"], tmp_path / "e.parquet")
    events = read_events(tmp_path / "e.parquet").to_pandas()
    assert not events["file"].str.startswith("?fd=").any() or \
        events[events["file"].str.startswith("?fd=")]["file"].str.contains("fd=[012]/").all()


def test_every_write_strace_left_unfinished_keeps_its_size(tmp_path: Path) -> None:
    """The asterisk log's threads leave hundreds of writes unfinished, each resumed with
    "<... write resumed> )": the size is the last argument of the first half."""
    log = STRACE_DIR / "zicada_asterisk_strace.log"
    unfinished = sum(1 for line in log.read_text(errors="replace").splitlines()
                     if re.search(r" write\(.*, \d+ <unfinished \.\.\.>$", line))
    events = read_events(ingest([log], tmp_path / "e.parquet").output).to_pandas()
    writes = events[events["orig"] == "write"]
    assert unfinished > 300
    assert writes["size"].notna().all()


def test_the_parsers_operations_are_the_vocabularys_in_its_order() -> None:
    """The parser counts file calls by operation (timeline.h's TIMELINE_OPERATIONS, indexed by
    place), and the predictor reads the counts by DESIGN.md's names (traces/vocabulary.py): the
    two lists must be one."""
    from fsbm.traces.vocabulary import OPERATIONS

    header = (Path(__file__).resolve().parent.parent / "traces" / "native" / "timeline.h").read_text()
    macro = re.search(r"#define TIMELINE_OPERATIONS ((?:.*\\\n)*.*)", header)
    assert macro is not None
    assert tuple(re.findall(r'"(\w+)"', macro.group(1))) == OPERATIONS
    assert f"TIMELINE_FILE_OPS = {len(OPERATIONS)} " in header

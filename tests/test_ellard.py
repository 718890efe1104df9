"""Ellard's nfsdump text (../shared/data/nfs/ellard-text): per-client operation counts equal
DataSeries' own analysis of the same lines (ellard-analysis.txt.ref)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from fsbm.traces.errors import TraceParseError
from fsbm.traces.ingest import detect_format, ingest, read_events
from tests.conftest import SHARED_DATA, run_fsbm

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

ELLARD = SHARED_DATA / "nfs" / "ellard-text"
COLUMNS = ("read", "write", "lookup", "getattr", "access", "create", "remove")


def reference() -> dict[str, dict[str, int]]:
    expected = {}
    for line in (ELLARD / "ellard-analysis.txt.ref").read_text().splitlines():
        if line.startswith("C "):
            fields = line.split()
            numbers = [int(x) for x in fields[6:]]
            expected[fields[2]] = {"total": numbers[0], **dict(zip(COLUMNS, numbers[2:]))}
    return expected


@pytest.fixture
def events(tmp_path: Path):
    if not ELLARD.is_dir():
        pytest.fail("shared data missing") if __import__("os").environ.get("CI") == "true" else pytest.skip("no data")
    source = ELLARD / "ellard-raw-data.txt"
    assert detect_format(source) == "ellard"
    result = ingest([source], tmp_path / "e.parquet", keep_going=True)
    return result, read_events(tmp_path / "e.parquet").to_pandas()


def test_per_client_counts_equal_dataseries_analysis(events) -> None:
    _, frame = events
    ours = {}
    for client, group in frame.groupby("actor", observed=True):
        names = Counter(group["orig"].str.split(".").str[1].str.lower())
        ours[client] = {"total": len(group), **{c: names.get(c, 0) for c in COLUMNS}}
    assert ours == reference()


def test_reads_carry_offsets_and_sizes_from_hex(events) -> None:
    _, frame = events
    reads = frame[frame["orig"] == "NFS3.READ"].sort_values("ts")
    assert list(reads["size"])[:2] == [8192, 8192]
    assert list(reads["offset"])[:2] == [0, 0x6000]
    assert reads["dur"].notna().any()


def test_short_packets_and_unmatched_records_are_counted(events) -> None:
    result, _ = events
    assert result.stats.malformed == 1  # the SHORT PACKET lookup no reply confirms
    assert result.stats.replies_without_call > 0 and result.stats.calls_without_reply > 0


def test_a_bad_line_names_its_line(tmp_path: Path) -> None:
    source = tmp_path / "t.txt"
    lines = (ELLARD / "ellard-raw-data.txt").read_text().splitlines()[:10]
    lines[4] = lines[4].replace(" T C3 ", " T Q9 ")
    source.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceParseError, match=r"t\.txt:5: expected T\|U then C2/C3/R2/R3"):
        ingest([source], tmp_path / "e.parquet", fmt="ellard")


def test_a_number_larger_than_the_table_holds_is_a_located_error(tmp_path: Path) -> None:
    # Issue 38: hex values of 2^63 or more gave an OverflowError (exit 70, "a bug in fsbm").
    text = tmp_path / "big.txt"
    text.write_text("1006231501.391115 31.03f7 30.0801 T C3 b253f2e4 6 read fh cfbc65840a0000000c000000 "
                    "off ffffffffffffffffff count 1000 con = XXX len = XXX\n"
                    "1006231501.393150 30.0801 31.03f7 T R3 b253f2e4 6 read OK count 1000 eof 0 status=0 "
                    "pl = XXX con = XXX len = XXX\n")
    done = run_fsbm("trace", "parse", str(text), "-o", str(tmp_path / "e.parquet"))
    assert done.returncode == 2 and f"{text}:1:" in done.stderr and "2^63" in done.stderr


def test_a_time_past_what_the_table_holds_is_a_located_error(tmp_path: Path) -> None:
    # Issue 38, found by bench/fuzz.py: a huge timestamp overflowed the int64 ns column later.
    text = tmp_path / "time.txt"
    text.write_text("1006231501999999999999.391115 31.03f7 30.0801 T C3 b253f2e4 6 read fh cfbc6584 off 0 "
                    "count 1000 con = XXX len = XXX\n")
    done = run_fsbm("trace", "parse", str(text), "-o", str(tmp_path / "e.parquet"))
    assert done.returncode == 2 and f"{text}:1:" in done.stderr and "Traceback" not in done.stderr


def test_a_negative_procedure_number_is_a_located_error(tmp_path: Path) -> None:
    # Found by bench/fuzz.py: "-3" read as hex indexed the procedure names from the end, and
    # a huge negative one raised an IndexError (exit 70, "a bug in fsbm").
    text = tmp_path / "negative.txt"
    text.write_text("1006231501.391115 31.03f7 30.0801 T C3 b253f2e4 -ffffffffffffffffff read fh cfbc6584 off 0 "
                    "count 1000 con = XXX len = XXX\n")
    done = run_fsbm("trace", "parse", str(text), "-o", str(tmp_path / "e.parquet"))
    assert done.returncode == 2 and f"{text}:1:" in done.stderr and "negative" in done.stderr, done.stderr


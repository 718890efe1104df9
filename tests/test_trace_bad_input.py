"""Bad trace input: a clear error naming the file and line, or with --keep-going the
events parsed so far and a count of what was skipped.  Never a traceback, never a crash."""

from __future__ import annotations

import gzip
import random
import resource
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsbm.errors import UsageError
from fsbm.traces.errors import TraceParseError
from fsbm.traces.ingest import ingest, read_events
from fsbm.traces.strace import parser_binary
from tests.conftest import SHARED_DATA, run_fsbm

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

GOOD = (
    '100 1700000000.000001 openat(AT_FDCWD, "/data/a", O_RDONLY) = 3 <0.000010>\n'
    '100 1700000000.000002 read(3, "abc", 4096) = 3 <0.000005>\n'
    '100 1700000000.000003 close(3) = 0 <0.000001>\n'
)


def test_a_line_cut_in_half_names_the_file_and_line(tmp_path: Path) -> None:
    log = tmp_path / "cut.strace"
    log.write_text(GOOD + '100 1700000000.000004 openat(AT_FDCWD, "/data/b", O_RDO')
    with pytest.raises(TraceParseError) as caught:
        ingest([log], tmp_path / "e.parquet")
    assert caught.value.position == 4
    assert "argument list is not closed" in caught.value.reason and "truncated" in caught.value.reason
    assert not (tmp_path / "e.parquet").exists()


def test_keep_going_keeps_what_parsed_and_counts_the_rest(tmp_path: Path) -> None:
    log = tmp_path / "mixed.strace"
    log.write_text(GOOD + "this is not strace\n" + GOOD.replace("/data/a", "/data/c"))
    result = ingest([log], tmp_path / "e.parquet", keep_going=True)
    assert result.stats.bad_lines == 1
    assert "mixed.strace:4:" in result.stats.first_errors[0]
    assert result.events == 6
    assert set(read_events(tmp_path / "e.parquet").to_pandas()["file"]) == {"/data/a", "/data/c"}


def test_binary_garbage_is_not_mistaken_for_a_log(tmp_path: Path) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(random.Random(1).randrange(256) for _ in range(20000)))
    with pytest.raises(TraceParseError):
        ingest([junk], tmp_path / "e.parquet", keep_going=True)


def test_text_that_is_not_strace_is_refused_even_with_keep_going(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("".join(f"shopping list item {i}\n" for i in range(100)))
    with pytest.raises(TraceParseError, match="does not look like strace output"):
        ingest([notes], tmp_path / "e.parquet", keep_going=True)


def test_gzip_input_is_read_and_damaged_gzip_is_reported(tmp_path: Path) -> None:
    log = tmp_path / "t.strace.gz"
    log.write_bytes(gzip.compress(GOOD.encode() * 100))
    assert ingest([log], tmp_path / "e.parquet").events == 300
    damaged = tmp_path / "bad.strace.gz"
    blob = bytearray(gzip.compress(GOOD.encode() * 2000))
    blob[len(blob) // 2: len(blob) // 2 + 64] = b"\0" * 64
    damaged.write_bytes(bytes(blob))
    with pytest.raises(TraceParseError, match="compressed data is damaged|cannot be decompressed"):
        ingest([damaged], tmp_path / "e2.parquet")


def test_an_existing_output_is_never_overwritten(tmp_path: Path) -> None:
    log = tmp_path / "t.strace"
    log.write_text(GOOD)
    out = tmp_path / "e.parquet"
    out.write_text("mine")
    with pytest.raises(UsageError, match="exists"):
        ingest([log], out)
    assert out.read_text() == "mine"


def test_the_cli_reports_bad_input_in_one_line_with_exit_2(tmp_path: Path, fsbm_home: Path) -> None:
    log = tmp_path / "cut.strace"
    log.write_text(GOOD + "100 1700000000.000004 read(3, ")
    done = run_fsbm("trace", "parse", str(log), "-o", str(tmp_path / "e.parquet"))
    assert done.returncode == 2
    assert f"{log}:4: the argument list is not closed" in done.stderr
    assert "Traceback" not in done.stderr
    missing = run_fsbm("trace", "parse", str(tmp_path / "nope.strace"), "-o", str(tmp_path / "x.parquet"))
    assert missing.returncode == 2 and "nope.strace: no such file" in missing.stderr


# -- fuzzing ---------------------------------------------------------------------------

def _seeds() -> list[bytes]:
    seeds = [GOOD.encode()]
    directory = SHARED_DATA / "strace"
    if directory.is_dir():
        rng = random.Random(7)
        for log in sorted(directory.iterdir()):
            lines = log.read_bytes().splitlines(keepends=True)
            for _ in range(20):
                start = rng.randrange(max(1, len(lines) - 30))
                seeds.append(b"".join(lines[start:start + rng.randrange(1, 30)]))
    return seeds


SPLICES = (b"(", b")", b'"', b"\\", b"<", b">", b"{", b"[", b"\0", b"\n", b"<... read resumed>",
           b" <unfinished ...>\n", b" = -1 EBADF", b"\xff\xfe", b"99999999999999999999")
SEEDS = _seeds()


@st.composite
def mutated_logs(draw: st.DrawFn) -> bytes:
    """A slice of a real log with up to five mutations: a byte changed, the rest cut, syntax
    spliced in, a stretch repeated or deleted, or random bytes inserted."""
    buf = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 5))):
        choice = draw(st.integers(0, 5))
        at = draw(st.integers(0, len(buf)))
        if choice == 0 and buf:
            buf[min(at, len(buf) - 1)] = draw(st.integers(0, 255))
        elif choice == 1:
            del buf[at:]
        elif choice == 2:
            buf[at:at] = draw(st.sampled_from(SPLICES))
        elif choice == 3 and buf:
            end = min(len(buf), at + draw(st.integers(1, 200)))
            buf[at:at] = buf[at:end] * draw(st.integers(1, 3))
        elif choice == 4 and buf:
            del buf[at:at + draw(st.integers(1, 50))]
        else:
            buf[at:at] = draw(st.binary(min_size=1, max_size=40))
    return bytes(buf)


def _run(binary: Path, data: bytes) -> tuple[int, str]:
    done = subprocess.run([str(binary), "--keep-going", "--name", "fuzz", "-"], input=data, capture_output=True,
                          timeout=30)
    return done.returncode, done.stderr.decode(errors="replace")


FUZZED = {"plain": 0, "sanitized": 0}
# Mutated logs per suite run, a tenth of them sanitized too.  bench/fuzz.py runs 10,000 inputs
# of every kind (logs, captures, Ellard text) through the whole ingest; this is the parser's
# share of it, kept small enough for the suite's budget.
FUZZED_LOGS = 3_000


@pytest.mark.slow(seconds=23)
@settings(max_examples=FUZZED_LOGS, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(log=mutated_logs())
def test_thousands_of_mutated_logs_never_crash_the_parser(log: bytes) -> None:
    """Exit 0 (parsed, bad lines counted) or 2 (refused, with a message): never a crash.
    Every tenth input also runs under AddressSanitizer and UndefinedBehaviorSanitizer."""
    binary = parser_binary()
    code, err = _run(binary, log)
    assert code in (0, 2), err[-500:]
    FUZZED["plain"] += 1
    if FUZZED["plain"] % 10 == 0:
        sanitized = binary.with_name("strace2events-asan")
        assert sanitized.exists(), "the sanitizer build (make -C traces/native asan) is missing"
        code, err = _run(sanitized, log)
        assert code in (0, 2), err[-800:]
        FUZZED["sanitized"] += 1


def test_the_fuzzing_ran_all_its_inputs() -> None:
    if FUZZED["plain"] == 0:
        pytest.skip("run together with the fuzz test")
    assert FUZZED["plain"] >= FUZZED_LOGS and FUZZED["sanitized"] >= FUZZED_LOGS // 10


def test_paths_that_are_not_utf8_are_escaped_and_a_large_log_of_them_parses(tmp_path: Path) -> None:
    # Issue 38: past a few MB of such rows the parse deadlocked (the parser blocked writing
    # rows the reader had stopped reading, the reader waiting for its error output).
    log = tmp_path / "bytes.strace"
    with open(log, "wb") as f:
        f.write(b'1000 1634121765.422781 openat(AT_FDCWD, "/tmp/a", O_RDONLY) = 3</tmp/a\xff\xfe>\n')
        for _ in range(300_000):
            f.write(b'1000 1634121765.422790 read(3</tmp/a\xff\xfe>, "abc", 3) = 3\n')
    done = run_fsbm("trace", "parse", str(log), "-o", str(tmp_path / "e.parquet"), timeout=120)
    assert done.returncode == 0, done.stderr
    files = set(read_events(tmp_path / "e.parquet").column("file").to_pylist())
    assert files == {"/tmp/a\\xff\\xfe"}


def test_a_descriptor_no_kernel_hands_out_keeps_its_path_and_costs_no_memory(tmp_path: Path) -> None:
    # Issue 38: a huge fd with a -y path read freed memory (use after free); fd 16777216
    # grew every process's table to 512 MB, copied at each fork.
    huge = tmp_path / "huge.strace"
    huge.write_text('100 1700000000.000001 read(1099511627776</w/a.txt>, "x", 1) = 1\n')
    events = read_events(ingest([huge], tmp_path / "h.parquet").output)
    assert events.column("file").to_pylist() == ["/w/a.txt"]
    forks = tmp_path / "forks.strace"
    forks.write_text('100 1700000000.000001 openat(AT_FDCWD, "/w/a", O_RDONLY) = 16777216</w/a>\n'
                     + "".join(f"100 1700000000.0000{i:02d} clone(child_stack=NULL, flags=SIGCHLD) = {200 + i}\n"
                               for i in range(2, 40)))
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (256 << 20, 256 << 20))

    done = subprocess.run([str(parser_binary()), str(forks)], capture_output=True, preexec_fn=limited)
    assert done.returncode == 0, done.stderr


def test_errors_print_paths_and_line_numbers_as_they_are(tmp_path: Path) -> None:
    # Issue 38: "[/x]" in a path was read as markup (a traceback), ":100:" as an emoji code.
    odd = tmp_path / "[red]" / "[/x]"
    odd.mkdir(parents=True)
    log = odd / "a.strace"
    log.write_text(GOOD * 33 + "not a strace line\n")
    done = run_fsbm("trace", "parse", str(log), "-o", str(tmp_path / "e.parquet"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{log}:100:" in done.stderr.replace("\n", "")


def test_a_damaged_compressed_trace_is_bad_input_not_a_bug(tmp_path: Path) -> None:
    damaged = bytearray(gzip.compress(GOOD.encode() * 2000))
    for i in range(200, len(damaged), 997):
        damaged[i] ^= 0x55
    log = tmp_path / "damaged.strace.gz"
    log.write_bytes(bytes(damaged))
    done = run_fsbm("trace", "parse", str(log), "-o", str(tmp_path / "e.parquet"))
    assert done.returncode == 2 and "internal error" not in done.stderr, done.stderr
    assert str(log) in done.stderr and "damaged" in done.stderr
    assert "--keep-going" not in done.stderr  # skipping records cannot mend a damaged file


def test_offsets_and_numbers_at_the_edge_of_64_bits_are_not_undefined_behaviour(tmp_path: Path) -> None:
    # Issue 38: UBSan found signed overflow in offset + size and in negating -2^63.
    log = tmp_path / "edge.strace"
    log.write_text('100 1700000000.000001 openat(AT_FDCWD, "/w/a", O_RDONLY) = 3</w/a>\n'
                   "100 1700000000.000002 lseek(3</w/a>, 9223372036854775800, SEEK_SET) = 9223372036854775800\n"
                   '100 1700000000.000003 read(3</w/a>, "abc", 100) = 100\n'
                   '100 1700000000.000004 read(3</w/a>, "abc", 100) = 100\n'
                   '100 1700000000.000005 pread64(3</w/a>, "x", 1, -9223372036854775808) = -1 EINVAL (Invalid)\n'
                   '100 1700000000.000006 read(3</w/a>, "x", 99999999999999999999999) = 1\n')
    sanitized = parser_binary().with_name("strace2events-asan")
    done = subprocess.run([str(sanitized), str(log)], capture_output=True, text=True)
    assert done.returncode == 0 and "runtime error" not in done.stderr, done.stderr
    offsets = [int(row.split("\t")[9]) for row in done.stdout.splitlines() if "\tread\t" in row]
    assert offsets[:2] == [9223372036854775800, 2**63 - 1]  # a file ends at 2^63 - 1 at the latest


def test_a_damaged_event_table_is_bad_input_not_a_bug(tmp_path: Path) -> None:
    # Its footer is whole, so it passes as an event table until its data pages are decoded.
    table = tmp_path / "e.parquet"
    ingest([SHARED_DATA / "strace" / "zicada_asterisk_strace.log"], table, keep_going=True)
    damaged = bytearray(table.read_bytes())
    for i in range(200, len(damaged) // 2, 7):
        damaged[i] ^= 0xFF
    table.write_bytes(bytes(damaged))
    done = run_fsbm("characterize", str(table))
    assert done.returncode == 2 and "internal error" not in done.stderr, done.stderr
    assert f"{table}: row group 0 cannot be read" in done.stderr.replace("\n", "") and "damaged" in done.stderr

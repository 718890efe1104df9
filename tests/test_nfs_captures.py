"""Real third-party NFS captures (../shared/data/nfs, read at run time).

Per-operation counts equal nfstrace's reference breakdown (ops the server executed, as
nfstrace counts them) for every capture that has one, and the procedure counts equal
tshark's own -z rpc,programs statistics.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from fsbm.traces.errors import TraceParseError
from fsbm.traces.ingest import IngestResult, ingest, read_events
from fsbm.traces.replay_plan import build_plan
from fsbm.traces.vocabulary import LISTED_ENTRY_ORIG
from tests.conftest import SHARED_DATA

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

NFS_DIR = SHARED_DATA / "nfs"
EPAM = NFS_DIR / "epam-nfstrace"


def need_data() -> None:
    if not NFS_DIR.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{NFS_DIR} is missing; CI runs with shared/ beside the clone")
        pytest.skip("shared data not present")


def nfstrace_counts(ref: Path) -> Counter[str]:
    """'NFS v3 protocol' / 'NFS v4.x protocol' sections: per procedure (v3) or per operation (v4)."""
    counts: Counter[str] = Counter()
    version = None
    in_ops = False
    for line in ref.read_text().splitlines():
        header = re.match(r"NFS v(\d)(?:\.\d)? protocol$", line)
        if header:
            version, in_ops = header.group(1), False
            continue
        if line.startswith("###") or line.startswith("Per connection info"):
            version = None if line.startswith("Per connection") else version
            continue
        if version is None:
            continue
        if line.startswith("Total operations"):
            in_ops = True
            continue
        if line.startswith("Total procedures"):
            in_ops = False
            continue
        match = re.match(r"^([A-Z_0-9]+)\s+(\d+)\s+[\d.]+%$", line)
        if not match or int(match.group(2)) == 0:
            continue
        name = match.group(1)
        if version == "4" and not in_ops:
            if name == "NULL":
                counts["NFS4.NULL"] += int(match.group(2))
            continue  # COMPOUND itself is not an event; its operations are
        counts[f"NFS{version}.{name}"] += int(match.group(2))
    return counts


CAPTURES_WITH_REFERENCES = sorted(p.name.removesuffix(".pcap.bz2") for p in EPAM.glob("*.pcap.bz2")) \
    if EPAM.is_dir() else []
# Captures nfstrace itself cannot count: CIFS mixed in, or TCP it cannot frame.
NOT_COMPARABLE = {"eth-ipv4-tcp-nfsv3-4-41-cifs1-2", "tcp-seq-overlap-in-fragment-12721",
                  "eth-ipv4-tcp-nfsv4-incorrect_mount", "lo-ipv4-tcp-nfsv3-nfsacl"}


@pytest.mark.slow(seconds=4)
@pytest.mark.parametrize("name", [n for n in CAPTURES_WITH_REFERENCES if n not in NOT_COMPARABLE])
def test_operation_counts_equal_nfstrace_reference(name: str, whole_table: Callable[..., IngestResult]) -> None:
    need_data()
    expected = nfstrace_counts(EPAM / f"{name}.nfstrace-breakdown.ref.txt")
    events = read_events(whole_table(EPAM / f"{name}.pcap.bz2", keep_going=True).output).to_pandas()
    answered = events[events["dur"].notna()]  # nfstrace counts call/reply pairs
    ours = Counter(answered["orig"])
    assert {k: v for k, v in ours.items() if k.startswith(("NFS3", "NFS4"))} == dict(expected)


def test_v3_write_offsets_are_sequential_per_file(whole_table: Callable[..., IngestResult]) -> None:
    need_data()
    writes = read_events(whole_table(EPAM / "eth-ipv4-tcp-nfsv3.pcap.bz2").output).to_pandas().query("op == 'write'").sort_values("ts")
    assert len(writes) == 3200 and writes["file"].nunique() == 10 and set(writes["size"]) == {32768}
    sequential = sum(((g["offset"].values[1:] == g["offset"].values[:-1] + g["size"].values[:-1]).sum())
                     for _, g in writes.groupby("file", observed=True))
    assert sequential == 3190  # SOURCES.md: 3190 sequential + 10 first writes
    assert writes["dur"].notna().all() and (writes["dur"] >= 0).all()


def test_v4_compound_writes_carry_their_offsets(whole_table: Callable[..., IngestResult]) -> None:
    need_data()
    writes = read_events(whole_table(EPAM / "eth-ipv4-tcp-nfsv4.pcap.bz2").output).to_pandas().query("orig == 'NFS4.WRITE'").sort_values("offset")
    assert len(writes) == 1600 and writes["file"].nunique() == 1
    assert list(writes["offset"]) == [i * 65536 for i in range(1600)]
    assert set(writes["ret"]) == {65536}


def test_a_v4_readdir_says_the_bytes_a_getdents_would_have_listed(tmp_path: Path) -> None:
    """Reply 181 names 12 entries (tshark: debug, src, tests, README.md, .git, CMakeLists.txt,
    traces, VERSION, analyzers, docs, LICENSE, .gitignore); as getdents64 records (19 bytes,
    the name and its NUL, in 8-byte steps) 8 of them take 32 bytes, 3 take 24 and
    CMakeLists.txt 40: 368, which prices the call as a listing of that size."""
    need_data()
    ingest([EPAM / "eth-ipv4-tcp-nfsv41.pcap.bz2"], tmp_path / "e.parquet")
    listings = read_events(tmp_path / "e.parquet").to_pandas().query("orig == 'NFS4.READDIR'")
    assert len(listings) == 23
    assert listings.set_index("record").loc[180, "ret"] == 8 * 32 + 3 * 24 + 40


@pytest.mark.parametrize("capture", ["suricata-verify/nfs3-01_wireshark-wiki-nfsv3.pcap", "suricata-verify/nfsv2.pcap"])
def test_a_remove_is_an_event_of_the_file_it_removes_even_after_a_rename(capture: str, tmp_path: Path) -> None:
    """REMOVE, RMDIR and RENAME name a directory and a name; the file is the handle the CREATE
    or MKDIR of that name got back (and a rename moves the name), so what a file held and
    where a replay finds it follow it.  Both captures create a, rename it am, make d and h in
    it, then remove h, d and am."""
    need_data()
    ingest([NFS_DIR / capture], tmp_path / "e.parquet")
    events = read_events(tmp_path / "e.parquet").to_pandas()
    file_of = {(op, name): file for op, name, file in zip(events["orig"].str.split(".").str[1], events["path"],
                                                          events["file"])}
    assert file_of[("REMOVE", "am")] == file_of[("CREATE", "a")] == file_of[("RENAME", "a")]
    assert file_of[("REMOVE", "h")] == file_of[("CREATE", "h")]
    assert file_of[("RMDIR", "d")] == file_of[("MKDIR", "d")]
    text, stats = build_plan(read_events(tmp_path / "e.parquet"))
    paths = {f[2]: f[12] for f in (line.split("\t") for line in text.splitlines()) if f[0] == "O" and f[2] in
             ("mkdir", "rmdir")}
    assert paths["rmdir"] == paths["mkdir"] == "_nfs/" + file_of[("MKDIR", "d")]
    assert stats.skipped["NFS rename (the file keeps its handle, so its place)"] == 1


def test_a_v4_name_is_an_event_of_the_handle_its_getfh_returned(tmp_path: Path) -> None:
    """tshark puts NFSv4 names in nfs.pathname.component, and a COMPOUND tells a named file's
    handle by the GETFH after the op.  In this capture (checked with tshark -V): call 264
    CREATEs .#VERSION in 0x27bd943e and its GETFH returns 0xbce79fea, which REMOVE .#VERSION
    (call 288) removes; call 412 OPENs Larry7.cue in 0x02217500, GETFH 0x62d78303; call 560
    RENAMEs it into 0xa5b14293, call 732 LINKs it as Larry7.cue in 0x02217500 again, and
    call 960 RENAMEs it to Larry7.cue~ (found by its new name)."""
    need_data()
    ingest([EPAM / "eth-ipv4-tcp-nfsv41.pcap.bz2"], tmp_path / "e.parquet")
    events = read_events(tmp_path / "e.parquet").to_pandas()
    op = {(r.record, r.orig): (r.file, r.path, r.path2) for r in events.itertuples()}
    lookups = events[events["orig"] == "NFS4.LOOKUP"]
    assert len(lookups) == 25 and lookups["path"].notna().all()
    assert op[(264, "NFS4.CREATE")] == ("0xbce79fea", ".#VERSION", None)
    assert op[(288, "NFS4.REMOVE")] == ("0xbce79fea", ".#VERSION", None)
    assert op[(412, "NFS4.OPEN")] == ("0x62d78303", "Larry7.cue", None)
    assert op[(560, "NFS4.RENAME")] == ("0x62d78303", "Larry7.cue", "Larry7.cue")
    assert op[(960, "NFS4.RENAME")] == ("0x62d78303", "Larry7.cue", "Larry7.cue~")
    assert op[(732, "NFS4.LINK")] == ("0x62d78303", "Larry7.cue", None)
    # An OPEN by handle (CLAIM_FH) names no entry: the file is the current handle.
    assert op[(450, "NFS4.OPEN")] == ("0x62d78303", None, None)


@pytest.mark.parametrize("capture", ["suricata-verify/nfs3-01_wireshark-wiki-nfsv3.pcap", "suricata-verify/nfsv2.pcap",
                                     "zeek/nfs_base.pcap", "zeek/nfs_write.pcap"])
def test_procedure_counts_equal_tshark_rpc_statistics(capture: str, tmp_path: Path) -> None:
    need_data()
    path = NFS_DIR / capture
    out = subprocess.run(["tshark", "-r", str(path), "-q", "-n", "-z", "rpc,srt,100003,2", "-z", "rpc,srt,100003,3"],
                         capture_output=True, text=True, check=True).stdout
    expected: Counter[str] = Counter()
    version = None
    for line in out.splitlines():
        header = re.search(r"Filter: nfs\.procedure_v(\d)", line)
        if header:
            version = header.group(1)
        row = re.match(r"^\d+\s+(\w+)\s+(\d+)\s+[\d.]+", line.strip())
        if version and row and int(row.group(2)) > 0:
            expected[f"NFS{version}.{row.group(1)}"] += int(row.group(2))
    assert expected, out
    ingest([path], tmp_path / "e.parquet")
    ours = Counter(read_events(tmp_path / "e.parquet").to_pandas()["orig"])
    # Each entry a READDIRPLUS reply returned with its attributes is an event of its own, not a call.
    entries = ours.pop(LISTED_ENTRY_ORIG, 0)
    assert {k: v for k, v in ours.items() if k != "NFS3.NULL" and k != "NFS2.NULL"} == \
        {k: v for k, v in expected.items() if not k.endswith(".NULL")}
    listed = subprocess.run(["tshark", "-r", str(path), "-n", "-Y", "nfs.procedure_v3 == 17 && rpc.msgtyp == 1",
                             "-T", "fields", "-e", "nfs.readdirplus.entry.name"],
                            capture_output=True, text=True, check=True).stdout
    assert entries == sum(name not in (".", "..") for line in listed.split() for name in line.split(","))


def test_udp_retransmissions_are_counted_once_and_unanswered_calls_reported(tmp_path: Path) -> None:
    need_data()
    result = ingest([EPAM / "eth-ipv4-udp-nfsv3-dup-retransm.pcap.bz2"], tmp_path / "e.parquet", keep_going=True)
    events = read_events(tmp_path / "e.parquet").to_pandas()
    s = result.stats
    assert (s.calls, s.retransmissions, s.calls_without_reply, s.duplicate_replies) == (15, 3, 1, 1)
    assert Counter(events["orig"])["NFS3.WRITE"] == 12  # 15 calls less 3 retransmissions
    assert events["dur"].isna().sum() == 1  # the unanswered one: kept, its duration unknown


def test_a_reply_before_its_call_is_reported_not_dropped_silently(tmp_path: Path) -> None:
    need_data()
    result = ingest([EPAM / "eth-ipv4-udp-nfsv3-reply-first.pcap.bz2"], tmp_path / "e.parquet", keep_going=True)
    assert result.stats.undecodable_rpc_frames == 1
    assert "reply captured before its call" in result.stats.first_errors[0]


def test_malformed_captures_name_the_packet_or_are_skipped_with_keep_going(tmp_path: Path) -> None:
    need_data()
    for capture in sorted((NFS_DIR / "malformed").glob("*.pcap*")):
        try:
            ingest([capture], tmp_path / f"{capture.name}.parquet", keep_going=True)
        except TraceParseError as exc:  # a clear error is fine; a crash is not
            assert str(capture) in exc.message


def test_a_capture_cut_mid_packet_is_reported_with_the_packet_number(tmp_path: Path) -> None:
    need_data()
    data = (NFS_DIR / "zeek" / "nfs_write.pcap").read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) - 700])
    with pytest.raises(TraceParseError, match=r"cut\.pcap:\d+: the capture is cut short"):
        ingest([cut], tmp_path / "e.parquet")
    kept = ingest([cut], tmp_path / "kept.parquet", keep_going=True)
    assert kept.events > 0 and kept.stats.cut_short


def test_a_capture_without_nfs_is_refused(tmp_path: Path) -> None:
    need_data()
    other = tmp_path / "other-traffic.pcap"  # real packets, the NFS ones filtered out
    subprocess.run(["tshark", "-r", str(NFS_DIR / "zeek" / "nfs_base.pcap"), "-Y", "not rpc", "-w", str(other)],
                   check=True, capture_output=True)
    with pytest.raises(TraceParseError, match="no NFS calls"):
        ingest([other], tmp_path / "e.parquet")


def test_a_reader_that_stops_early_does_not_wait_forever_for_tshark(tmp_path: Path) -> None:
    # A packet refused early (or a reader that went away) left tshark blocked writing the
    # rest of a large capture to us while we waited for its stderr to close: a hang (the
    # fuzz benchmark's one, a mutated capture whose 32nd packet was malformed).
    capture = SHARED_DATA / "nfs" / "epam-nfstrace" / "eth-ipv4-tcp-nfsv3-4-41-cifs1-2.pcap.bz2"
    script = ("import sys\nfrom pathlib import Path\nfrom fsbm.traces.nfs import NfsReader, NfsStats\n"
              f"messages = NfsReader(Path({str(capture)!r}))._messages(NfsStats())\n"
              "next(messages)\nmessages.close()\nprint('closed')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "closed" in done.stdout, done.stderr


def test_a_packet_time_before_1970_is_a_located_error(tmp_path: Path) -> None:
    # Found by bench/fuzz.py: a record's microseconds past 2^32 - 16 make tshark give a time
    # before 1970, which raised a ValueError (exit 70, "a bug in fsbm").
    import bz2
    import struct

    source = SHARED_DATA / "nfs" / "epam-nfstrace" / "2sessions-tcp-wsize32k-tcp-wsize512k.pcap.bz2"
    data = bytearray(bz2.decompress(source.read_bytes()))
    assert data[:4] == bytes.fromhex("d4c3b2a1")  # little-endian classic pcap: 24-byte header, then records
    capture = tmp_path / "early.pcap"
    capture.write_bytes(bytes(data))
    numbers = subprocess.run(["tshark", "-r", str(capture), "-d", "tcp.port==2049,rpc", "-Y", "nfs", "-T", "fields",
                              "-e", "frame.number"], capture_output=True, text=True, check=True).stdout
    first_nfs = int(numbers.split()[0])
    offset = 24
    for _ in range(first_nfs - 1):
        offset += 16 + struct.unpack_from("<I", data, offset + 8)[0]
    struct.pack_into("<I", data, offset + 4, 0xFFFFFFF0)  # that record's microseconds
    capture.write_bytes(bytes(data))
    with pytest.raises(TraceParseError, match=rf"early\.pcap:{first_nfs}: the time -\d+\.\d+ is outside"):
        ingest([capture], tmp_path / "e.parquet")
    kept = ingest([capture], tmp_path / "k.parquet", keep_going=True)  # the rest of the capture is kept
    assert kept.events > 0


def _moved_to_port(capture: Path, out: Path, port: int) -> Path:
    """The capture with every TCP port 2049 rewritten to `port` (Ethernet, IPv4, classic pcap):
    NFS served elsewhere, which tshark decodes as RPC only when told to."""
    import bz2
    import struct

    data = bytearray(bz2.decompress(capture.read_bytes()))
    little = data[:4] == b"\xd4\xc3\xb2\xa1"
    assert little or data[:4] == b"\xa1\xb2\xc3\xd4", "a classic pcap"
    at, moved = 24, 0
    while at + 16 <= len(data):
        caplen = struct.unpack_from("<I" if little else ">I", data, at + 8)[0]
        frame = at + 16
        if data[frame + 12:frame + 14] == b"\x08\x00" and data[frame + 23] == 6:  # IPv4, TCP
            tcp = frame + 14 + (data[frame + 14] & 0x0F) * 4
            for offset in (tcp, tcp + 2):
                if struct.unpack_from(">H", data, offset)[0] == 2049:
                    struct.pack_into(">H", data, offset, port)
                    moved += 1
        at = frame + caplen
    assert moved > 1000
    out.write_bytes(bytes(data))
    return out


@pytest.mark.slow(seconds=14)
def test_nfs_on_another_port_and_a_display_filter_are_passed_to_tshark(tmp_path: Path) -> None:
    from fsbm.errors import UsageError
    from fsbm.traces.nfs import CaptureOptions

    need_data()
    original = EPAM / "eth-ipv4-tcp-nfsv3.pcap.bz2"
    expected = ingest([original], tmp_path / "original.parquet").events
    moved = _moved_to_port(original, tmp_path / "moved.pcap", 20490)
    # tshark's RPC heuristics find this whole capture's NFS on port 20490 by themselves too;
    # decode-as is for the captures where they cannot (a capture that starts mid-stream).
    found = ingest([moved], tmp_path / "moved.parquet", capture=CaptureOptions(nfs_ports=(20490,)))
    assert found.events == expected > 1000

    two = EPAM / "2sessions-tcp-wsize32k-tcp-wsize512k.pcap.bz2"
    everything = ingest([two], tmp_path / "two.parquet").events
    one = ingest([two], tmp_path / "one.parquet", capture=CaptureOptions(display_filter="ip.addr == 10.6.137.24")).events
    assert 0 < one < everything
    with pytest.raises(UsageError, match="is not a tshark display filter"):
        ingest([two], tmp_path / "bad.parquet", capture=CaptureOptions(display_filter="ip.src ==== 1"))

"""A capture dissected in parts, cut by time or by connection (traces/nfs_parts.py,
traces/native/capsplit.c).

Every real capture in ../shared/data is parsed whole and in parts on workers, cut both ways: the
tables and the counts must be the same, pcap and pcapng, TCP and UDP, IPv4 and IPv6, damaged
ones too.
"""

from __future__ import annotations

import functools
import socket
import struct
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsbm.traces.errors import TraceParseError
from fsbm.traces.ingest import IngestResult, ingest
from fsbm.traces.nfs_parts import CUTS, LEAD_IN, capsplit_binary
from tests.conftest import SHARED_DATA, run_fsbm

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

NFS_DIR = SHARED_DATA / "nfs"
CAPTURES = sorted(p for d in ("epam-nfstrace", "zeek", "suricata-verify", "tcpdump") for p in (NFS_DIR / d).glob("*")
                  if p.name.endswith((".pcap", ".pcapng", ".pcap.bz2")))


def both_ways(capture: Path, out: Path, whole_table: Callable[..., IngestResult], keep_going: bool = False,
              cut: str = "time") -> tuple[IngestResult, IngestResult]:
    """The capture's table parsed whole (once a session: whole_table) and in parts, here."""
    whole = whole_table(capture, keep_going)
    with ThreadPoolExecutor(2) as pool:
        parts = ingest([capture], out / "parts.parquet", force=True, keep_going=keep_going, workers=pool,
                       capture_cut=cut)
    return whole, parts


# nfstrace's two largest captures cut by time: test_captures_are_cut_by_time_between_records's
# (one's table in parts as pcap, the other's as pcapng).
CUT_BY_TIME_APART = ("eth-ipv4-tcp-nfsv4.pcap.bz2", "eth-ipv4-tcp-nfsv3-4-41-cifs1-2.pcap.bz2")
# Every other capture cut by time; by connection, the small ones (UDP and TCP, damaged ones
# too): the large ones by connection are test_a_capture_is_cut_by_connection_with_every_packet_once's.
CUT_CASES = [(capture, "time") for capture in CAPTURES if capture.name not in CUT_BY_TIME_APART] + [
    (capture, "connection") for capture in CAPTURES if capture.stat().st_size < 100_000]


@pytest.mark.slow(seconds=3)
@pytest.mark.parametrize(("capture", "cut"), CUT_CASES, ids=lambda p: getattr(p, "name", p))
def test_parts_give_the_whole_captures_table(capture: Path, cut: str, tmp_path: Path,
                                             whole_table: Callable[..., IngestResult]) -> None:
    # By time, each capture is parsed as the fio-job and nfstrace-count tests parse it (going
    # on past bad packets), so its whole table is theirs too; by connection, strictly, so
    # that a refusal is seen to be the same in parts (no capture cut by time is refused
    # strictly but the one too small to cut, which is cut by connection too).
    keep_going = cut == "time"
    try:
        whole, parts = both_ways(capture, tmp_path, whole_table, keep_going=keep_going, cut=cut)
    except TraceParseError as refused:  # one capture holds no NFS call: refused the same in parts
        with ThreadPoolExecutor(2) as pool, pytest.raises(TraceParseError) as in_parts:
            ingest([capture], tmp_path / "parts.parquet", force=True, keep_going=keep_going, workers=pool,
                   capture_cut=cut)
        assert in_parts.value.message == refused.message and "no NFS calls" in refused.message
        return
    assert pq.read_table(parts.output).equals(pq.read_table(whole.output))
    assert vars(parts.stats) == vars(whole.stats)


def nfs_client_ports(capture: Path) -> set[int]:
    """The source ports of the TCP segments sent to port 2049 in a classic pcap of Ethernet
    frames, read field by field (an oracle apart from capsplit's own reader; tshark's
    dissection of the same 186 MB took 13 s here, this 1 s)."""
    data = capture.read_bytes()
    order = "<" if data[:4] == b"\xd4\xc3\xb2\xa1" else ">"
    ports: set[int] = set()
    at = 24  # the file's header
    while at + 16 <= len(data):
        length = struct.unpack_from(order + "I", data, at + 8)[0]
        frame = data[at + 16:at + 16 + length]
        at += 16 + length
        ethertype = struct.unpack_from(">H", frame, 12)[0] if len(frame) >= 14 else None
        if ethertype == 0x0800 and len(frame) >= 34 and frame[23] == socket.IPPROTO_TCP:
            tcp = 14 + (frame[14] & 0x0F) * 4
        elif ethertype == 0x86DD and len(frame) >= 54 and frame[20] == socket.IPPROTO_TCP:
            tcp = 54
        else:
            continue
        if len(frame) >= tcp + 4 and struct.unpack_from(">H", frame, tcp + 2)[0] == 2049:
            ports.add(struct.unpack_from(">H", frame, tcp)[0])
    return ports


@pytest.mark.slow(seconds=32)
def test_a_capture_is_cut_by_connection_with_every_packet_once(tmp_path: Path,
                                                               whole_table: Callable[..., IngestResult]) -> None:
    capture = tmp_path / "v3.pcap"
    subprocess.run(f"bzcat {NFS_DIR / 'epam-nfstrace' / 'eth-ipv4-tcp-nfsv3-4-41-cifs1-2.pcap.bz2'} > {capture}",
                   shell=True, check=True)
    ng = tmp_path / "v3.pcapng"  # the same packets as pcapng
    subprocess.run(["editcap", "-F", "pcapng", str(capture), str(ng)], check=True)
    by_part: dict[Path, list[np.ndarray]] = {}
    for source in (capture, ng):
        subprocess.run([str(capsplit_binary()), "--by", "connection", "4", str(tmp_path / source.suffix[1:]),
                        str(source)], check=True)
        by_part[source] = [np.fromfile(tmp_path / f"{source.suffix[1:]}-{k}.frames", "<u8") for k in range(4)]
        assert np.array_equal(np.sort(np.concatenate(by_part[source])), np.arange(1, 71_388))  # capinfos: 71,387
    # Each NFS connection (client port to 2049) lies in one part only; the pcapng's parts hold
    # the same frames as the pcap's, so the same holds for them.
    holders: dict[int, set[int]] = {}
    for k in range(4):
        for port in nfs_client_ports(tmp_path / f"pcap-{k}.cap"):
            holders.setdefault(port, set()).add(k)
    assert len(holders) >= 3 and all(len(parts) == 1 for parts in holders.values())
    assert all(np.array_equal(a, b) for a, b in zip(by_part[capture], by_part[ng]))
    whole, parts = both_ways(ng, tmp_path, whole_table, cut="connection")
    assert pq.read_table(parts.output).equals(pq.read_table(whole.output))


@pytest.mark.slow(seconds=16)
@pytest.mark.parametrize(("name", "packets", "parsed"), list(zip(CUT_BY_TIME_APART, (45_059, 71_387), ("pcap", "pcapng"))))
def test_captures_are_cut_by_time_between_records(name: str, packets: int, parsed: str, tmp_path: Path,
                                                  whole_table: Callable[..., IngestResult]) -> None:
    """nfstrace's NFSv4 capture is one connection writing a file in 1 MiB WRITEs: by
    connection it is one part.  Its NFSv3/v4/v4.1 capture has three NFS connections on
    loopback, segments the capture missed, and CIFS beside them.  By time every part holds at
    least a sixth of either, segments cut where a record begins, the calls a part's replies
    answer copied in as lead-ins; as pcap and as pcapng; and the table of the `parsed` one in
    parts is the whole capture's (each format on one large capture: the parse of either in
    parts takes a third of a minute here)."""
    capture = tmp_path / "c.pcap"
    subprocess.run(f"bzcat {NFS_DIR / 'epam-nfstrace' / name} > {capture}", shell=True, check=True)
    ng = tmp_path / "c.pcapng"
    subprocess.run(["editcap", "-F", "pcapng", str(capture), str(ng)], check=True)
    for source in (capture, ng):
        out = tmp_path / source.suffix[1:]
        subprocess.run([str(capsplit_binary()), "--by", "time", "4", str(out), str(source)], check=True)
        numbers = [np.fromfile(f"{out}-{k}.frames", "<u8") for k in range(4)]
        owned = [n[n < LEAD_IN] for n in numbers]
        assert np.array_equal(np.unique(np.concatenate(owned)), np.arange(1, packets + 1))
        assert all(len(mine) > packets / 6 for mine in owned)
        # A packet goes to two parts only where a record begins in it: a few per cut.
        assert 0 < len(np.concatenate(owned)) - packets < 100
        assert sum(int((n >= LEAD_IN).sum()) for n in numbers) > 0
    whole, parts = both_ways(capture if parsed == "pcap" else ng, tmp_path, whole_table)
    assert pq.read_table(parts.output).equals(pq.read_table(whole.output))
    assert vars(parts.stats) == vars(whole.stats)


def test_a_cut_the_parser_does_not_know_is_refused_clearly(tmp_path: Path) -> None:
    capture = NFS_DIR / "epam-nfstrace" / "eth-ipv4-tcp-nfsv41.pcap.bz2"
    done = run_fsbm("trace", "parse", str(capture), "-o", str(tmp_path / "t.parquet"), "--jobs", "2",
                    "--cut", "sideways")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "cut by time or connection, not 'sideways'" in done.stderr
    assert not (tmp_path / "t.parquet").exists()


@pytest.mark.slow(seconds=17)
def test_damaged_captures_say_the_same_in_parts(tmp_path: Path, whole_table: Callable[..., IngestResult]) -> None:
    data = (NFS_DIR / "zeek" / "nfs_write.pcap").read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) - 700])
    with ThreadPoolExecutor(2) as pool:
        with pytest.raises(TraceParseError, match=r"cut\.pcap:\d+: the capture is cut short"):
            ingest([cut], tmp_path / "e.parquet", workers=pool)
    assert not list(tmp_path.glob(".fsbm-*"))  # the parts went beside the output, and are gone
    whole, parts = both_ways(cut, tmp_path, whole_table, keep_going=True)
    assert pq.read_table(parts.output).equals(pq.read_table(whole.output)) and parts.stats.cut_short
    with ThreadPoolExecutor(2) as pool:
        for capture in sorted((NFS_DIR / "malformed").glob("*.pcap*")):
            outcomes = []
            for workers in (None, pool):
                try:
                    outcomes.append(ingest([capture], tmp_path / "m.parquet", force=True, keep_going=True,
                                           workers=workers).events)
                except TraceParseError as exc:
                    outcomes.append(exc.message)
            assert outcomes[0] == outcomes[1], capture.name


@pytest.mark.slow(seconds=12)
@pytest.mark.parametrize("cluster", ["local", "apart"])
def test_on_a_dask_cluster_from_the_command_line(cluster: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    capture = NFS_DIR / "epam-nfstrace" / "eth-ipv4-tcp-nfsv3.pcap.bz2"  # small, cut in parts as any is
    whole = ingest([capture], tmp_path / "whole.parquet")
    where = ["--dask-workers", "2"] if cluster == "local" else ["--dask", request.getfixturevalue("scheduler_apart")]
    done = run_fsbm("trace", "parse", str(capture), "-o", str(tmp_path / "dask.parquet"), *where)
    assert done.returncode == 0, done.stderr
    assert pq.read_table(tmp_path / "dask.parquet").equals(pq.read_table(whole.output))


# -- capsplit reads every packet's headers, and by time the payloads' record markers: fuzzed --

FUZZ_SEEDS = ("eth-ipv4-tcp-nfsv4.pcap.bz2", "eth-ipv6-tcp-nfsv3.pcap.bz2", "eth-ipv4-tcp-nfsv41.pcap.bz2")


@functools.cache
def _first_packets(name: str, first: int = 600) -> bytes:
    """The first `first` packets of one of nfstrace's captures, as pcap."""
    raw = subprocess.run(["bzcat", str(NFS_DIR / "epam-nfstrace" / name)], capture_output=True, check=True).stdout
    return subprocess.run(["editcap", "-r", "-F", "pcap", "-", "-", f"1-{first}"], input=raw, capture_output=True,
                          check=True).stdout


@st.composite
def mutated_captures(draw: st.DrawFn) -> bytes:
    """A real capture's first packets with up to eight bytes changed past its file header
    (lengths, addresses, sequence numbers, record markers alike), or cut short."""
    buf = bytearray(_first_packets(draw(st.sampled_from(FUZZ_SEEDS))))
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(24, len(buf) - 1))
        if draw(st.integers(0, 9)) == 0:
            del buf[at:]
            break
        buf[at] = draw(st.integers(0, 255))
    return bytes(buf)


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(capture=mutated_captures())
def test_mutated_captures_never_crash_capsplit(capture: bytes, tmp_path_factory: pytest.TempPathFactory) -> None:
    """capsplit built with AddressSanitizer and UndefinedBehaviorSanitizer, cut both ways:
    exit 0 (cut), 2 (damaged) or 3 (not a capture), never a crash."""
    binary = capsplit_binary().with_name("capsplit-asan")
    assert binary.exists(), "the sanitizer build (make -C traces/native asan) is missing"
    work = tmp_path_factory.mktemp("fuzz")
    (work / "in.pcap").write_bytes(capture)
    for cut in CUTS:
        done = subprocess.run([str(binary), "--by", cut, "3", str(work / "part"), str(work / "in.pcap")],
                              capture_output=True, timeout=60)
        report = done.stderr.decode(errors="replace")
        assert done.returncode in (0, 2, 3) and "runtime error" not in report, report[-800:]

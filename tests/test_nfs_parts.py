"""A capture dissected in parts cut by connection (traces/nfs_parts.py, traces/native/capsplit.c).

Every real capture in ../shared/data is parsed whole and in parts on workers: the tables and
the counts must be the same, pcap and pcapng, TCP and UDP, IPv4 and IPv6, damaged ones too.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from fsbm.traces.errors import TraceParseError
from fsbm.traces.ingest import ingest
from fsbm.traces.nfs_parts import capsplit_binary
from tests.conftest import SHARED_DATA, run_fsbm

NFS_DIR = SHARED_DATA / "nfs"
CAPTURES = sorted(p for d in ("epam-nfstrace", "zeek", "suricata-verify", "tcpdump") for p in (NFS_DIR / d).glob("*")
                  if p.name.endswith((".pcap", ".pcapng", ".pcap.bz2")))


def both_ways(capture: Path, out: Path, keep_going: bool = False) -> tuple[object, object]:
    whole = ingest([capture], out / "whole.parquet", force=True, keep_going=keep_going)
    with ThreadPoolExecutor(2) as pool:
        parts = ingest([capture], out / "parts.parquet", force=True, keep_going=keep_going, workers=pool)
    return whole, parts


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_parts_give_the_whole_captures_table(capture: Path, tmp_path: Path) -> None:
    try:
        whole, parts = both_ways(capture, tmp_path)
    except TraceParseError as refused:  # one capture holds no NFS call: refused the same in parts
        with ThreadPoolExecutor(2) as pool, pytest.raises(TraceParseError) as in_parts:
            ingest([capture], tmp_path / "parts.parquet", force=True, workers=pool)
        assert in_parts.value.message == refused.message and "no NFS calls" in refused.message
        return
    assert pq.read_table(parts.output).equals(pq.read_table(whole.output))
    assert vars(parts.stats) == vars(whole.stats)


def test_a_capture_is_cut_by_connection_with_every_packet_once(tmp_path: Path) -> None:
    capture = tmp_path / "v3.pcap"
    subprocess.run(f"bzcat {NFS_DIR / 'epam-nfstrace' / 'eth-ipv4-tcp-nfsv3-4-41-cifs1-2.pcap.bz2'} > {capture}",
                   shell=True, check=True)
    ng = tmp_path / "v3.pcapng"  # the same packets as pcapng
    subprocess.run(["editcap", "-F", "pcapng", str(capture), str(ng)], check=True)
    for source in (capture, ng):
        subprocess.run([str(capsplit_binary()), "4", str(tmp_path / source.suffix[1:]), str(source)], check=True)
        frames = np.sort(np.concatenate([np.fromfile(tmp_path / f"{source.suffix[1:]}-{k}.frames", "<u8")
                                         for k in range(4)]))
        assert np.array_equal(frames, np.arange(1, 71_388))  # capinfos: 71,387 packets
        # Each NFS connection (client port to 2049) lies in one part only.
        holders: dict[str, set[int]] = {}
        for k in range(4):
            ports = subprocess.run(["tshark", "-r", str(tmp_path / f"{source.suffix[1:]}-{k}.cap"), "-Y",
                                    "tcp.dstport == 2049", "-T", "fields", "-e", "tcp.srcport"],
                                   capture_output=True, text=True, check=True).stdout.split()
            for port in set(ports):
                holders.setdefault(port, set()).add(k)
        assert len(holders) >= 3 and all(len(parts) == 1 for parts in holders.values())
    whole, parts = both_ways(ng, tmp_path)
    assert pq.read_table(parts.output).equals(pq.read_table(whole.output))


def test_damaged_captures_say_the_same_in_parts(tmp_path: Path) -> None:
    data = (NFS_DIR / "zeek" / "nfs_write.pcap").read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) - 700])
    with ThreadPoolExecutor(2) as pool:
        with pytest.raises(TraceParseError, match=r"cut\.pcap:\d+: the capture is cut short"):
            ingest([cut], tmp_path / "e.parquet", workers=pool)
    assert not list(tmp_path.glob(".fsbm-*"))  # the parts went beside the output, and are gone
    whole, parts = both_ways(cut, tmp_path, keep_going=True)
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


@pytest.mark.parametrize("cluster", ["local", "apart"])
def test_on_a_dask_cluster_from_the_command_line(cluster: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    capture = NFS_DIR / "epam-nfstrace" / "eth-ipv6-tcp-nfsv3.pcap.bz2"
    whole = ingest([capture], tmp_path / "whole.parquet")
    where = ["--dask-workers", "2"] if cluster == "local" else ["--dask", request.getfixturevalue("scheduler_apart")]
    done = run_fsbm("trace", "parse", str(capture), "-o", str(tmp_path / "dask.parquet"), *where)
    assert done.returncode == 0, done.stderr
    assert pq.read_table(tmp_path / "dask.parquet").equals(pq.read_table(whole.output))

"""NFS captures (pcap/pcapng, v2/v3/v4.x, TCP/UDP, IPv4/IPv6) -> the event table.

tshark dissects (its field output is the fastest way out of it); this module matches
calls to replies by (client, server, xid), so duration = reply time - call time, counts
a retransmitted call once, reports replies without calls and calls without replies
instead of dropping them, and walks each NFSv4 COMPOUND op by op with the current
filehandle (PUTFH sets it, LOOKUP descends), so every op becomes its own event.

File identity is tshark's CRC-32 of the file handle (nfs.fh.hash), as hex.  A LOOKUP,
CREATE or (v4) OPEN of a name is an event of the handle its reply gave (v4: the GETFH that
followed it), else of "directory/name".  A REMOVE, RMDIR or RENAME names a directory and a
name; its file is the handle a LOOKUP, CREATE or OPEN reply gave that name (followed
through renames), else "directory/name".

A successful call's `ret` is 0, except READ and WRITE (the bytes moved) and READDIR and
READDIRPLUS: the bytes a local getdents64 would return for the entries the reply names
(each a 19-byte record head, the name and its NUL, in 8-byte steps), which is what a
listing is priced by.  A name holding a comma reads as two (tshark's field aggregator).

A v3 READDIRPLUS reply carries each entry's attributes and handle, so the server looked up
and read the inode of every file it lists: after the listing's event, each entry but "."
and ".." is a stat of its own (orig NFS3.READDIRPLUS_ENTRY, untimed, ret 0, size the
file's bytes its attributes say), of the handle the reply gave it, and the name is
remembered as a LOOKUP's is: a listing of 4,000 files costs a cold server those 4,000
inodes, not its names' bytes alone.
"""

from __future__ import annotations

import bz2
import re
import shutil
import subprocess
import tempfile
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from fsbm.errors import UsageError
from fsbm.microbench.system import require_program
from fsbm.traces.errors import TraceParseError
from fsbm.traces.nfs_timeline import NfsTimeline
from fsbm.traces.schema import EVENT_SCHEMA
from fsbm.traces.vocabulary import LISTED_ENTRY_ORIG, NFS_OPERATIONS

NFS_PROGRAM = "100003"
# The names a READDIR reply lists: v2, v3, v3's READDIRPLUS, v4.
LISTED_NAMES = ("nfs.readdir.entry.name", "nfs.readdir.entry3.name", "nfs.readdirplus.entry.name", "nfs.entry_name")
DIRENT_HEAD_BYTES = 19  # linux_dirent64 before its name: inode, offset, record length, type
FIELDS = (
    "frame.number", "frame.time_epoch", "ip.src", "ipv6.src", "ip.dst", "ipv6.dst", "tcp.srcport", "udp.srcport",
    "tcp.dstport", "udp.dstport", "rpc.xid", "rpc.msgtyp", "rpc.programversion", "rpc.procedure", "nfs.opcode",
    "nfs.fh.hash", "nfs.name", "nfs.offset3", "nfs.count3", "nfs.offset4", "nfs.count4", "nfs.read.offset",
    "nfs.write.offset", "nfs.read.count", "nfs.write.data_length", "nfs.read.data_length", "nfs.status",
    "nfs.status2", "nfs.pathname.component", "nfs.open.claim_type", "nfs.readdirplus.entry.fileid",
    "nfs.fattr3.fileid", "nfs.fattr3.size", *LISTED_NAMES, "_ws.malformed",
)
_IDX = {name: i for i, name in enumerate(FIELDS)}
# Fields read only to pair a READDIRPLUS entry with its size (listed_entries, which pairs by
# file id): every reply's attributes carry them, so in a frame of several messages they
# often do not divide evenly, and that alone does not make the frame ambiguous.
PAIRED_BY_ID = frozenset(("nfs.readdirplus.entry.fileid", "nfs.fattr3.fileid", "nfs.fattr3.size"))
# FIELDS before this one have one value a frame; from it to the last but one, one or more a
# message, aggregated over the frame's messages; the last says whether the frame was malformed.
MESSAGE_FIELDS_FROM = _IDX["rpc.xid"]

V2_PROCEDURES = ("NULL", "GETATTR", "SETATTR", "ROOT", "LOOKUP", "READLINK", "READ", "WRITECACHE", "WRITE",
                 "CREATE", "REMOVE", "RENAME", "LINK", "SYMLINK", "MKDIR", "RMDIR", "READDIR", "STATFS")
V3_PROCEDURES = ("NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ", "WRITE", "CREATE", "MKDIR",
                 "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK", "READDIR", "READDIRPLUS", "FSSTAT",
                 "FSINFO", "PATHCONF", "COMMIT")
V4_OPERATIONS = {
    3: "ACCESS", 4: "CLOSE", 5: "COMMIT", 6: "CREATE", 7: "DELEGPURGE", 8: "DELEGRETURN", 9: "GETATTR",
    10: "GETFH", 11: "LINK", 12: "LOCK", 13: "LOCKT", 14: "LOCKU", 15: "LOOKUP", 16: "LOOKUPP", 17: "NVERIFY",
    18: "OPEN", 19: "OPENATTR", 20: "OPEN_CONFIRM", 21: "OPEN_DOWNGRADE", 22: "PUTFH", 23: "PUTPUBFH",
    24: "PUTROOTFH", 25: "READ", 26: "READDIR", 27: "READLINK", 28: "REMOVE", 29: "RENAME", 30: "RENEW",
    31: "RESTOREFH", 32: "SAVEFH", 33: "SECINFO", 34: "SETATTR", 35: "SETCLIENTID", 36: "SETCLIENTID_CONFIRM",
    37: "VERIFY", 38: "WRITE", 39: "RELEASE_LOCKOWNER", 40: "BACKCHANNEL_CTL", 41: "BIND_CONN_TO_SESSION",
    42: "EXCHANGE_ID", 43: "CREATE_SESSION", 44: "DESTROY_SESSION", 45: "FREE_STATEID",
    46: "GET_DIR_DELEGATION", 47: "GETDEVICEINFO", 48: "GETDEVICELIST", 49: "LAYOUTCOMMIT", 50: "LAYOUTGET",
    51: "LAYOUTRETURN", 52: "SECINFO_NO_NAME", 53: "SEQUENCE", 54: "SET_SSV", 55: "TEST_STATEID",
    56: "WANT_DELEGATION", 57: "DESTROY_CLIENTID", 58: "RECLAIM_COMPLETE", 10044: "ILLEGAL",
}
GETFH = 10
# The NFSv4 ops that name one entry of the current directory, and the OPEN claims that do
# (CLAIM_NULL, CLAIM_DELEGATE_CUR, CLAIM_DELEGATE_PREV; the others open the current handle).
V4_NAMING_OPS = ("LOOKUP", "CREATE", "REMOVE", "LINK", "SECINFO")
V4_NAMING_CLAIMS = ("0", "2", "3")
# The ops after which the current handle is another file's, so a GETFH no longer returns
# the handle of the file an earlier op named.
V4_MOVING_OPS = ("PUTFH", "PUTROOTFH", "PUTPUBFH", "RESTOREFH", "LOOKUP", "LOOKUPP", "OPEN", "CREATE")
# NFS status -> errno name, so a failed NFS call reads like a failed syscall (replay compares them).
_ERRNO = {1: "EPERM", 2: "ENOENT", 5: "EIO", 6: "ENXIO", 13: "EACCES", 17: "EEXIST", 18: "EXDEV", 19: "ENODEV",
          20: "ENOTDIR", 21: "EISDIR", 22: "EINVAL", 27: "EFBIG", 28: "ENOSPC", 30: "EROFS", 31: "EMLINK",
          63: "ENAMETOOLONG", 66: "ENOTEMPTY", 69: "EDQUOT", 70: "ESTALE"}
_CHILDREN_MEMORY = 1 << 20  # names remembered; older ones fall back to "directory/name"
_ANSWERED_MEMORY = 200_000
_BATCH_ROWS = 65_536


@dataclass
class NfsStats:
    frames: int = 0
    calls: int = 0
    replies: int = 0
    events: int = 0
    retransmissions: int = 0
    duplicate_replies: int = 0
    replies_without_call: int = 0
    calls_without_reply: int = 0
    frames_with_several_messages: int = 0
    ambiguous_frames: int = 0
    undecodable_rpc_frames: int = 0
    malformed: int = 0
    cut_short: bool = False
    ts_origin: str = "epoch"
    first_errors: list[str] = field(default_factory=list)
    # The clients' busy and idle time (nfs_timeline.py), as the strace timeline's counts.
    timeline: dict[str, int] = field(default_factory=dict)

    @property
    def bad_lines(self) -> int:  # the name the CLI reports skipped records under
        return self.malformed

    @property
    def lines(self) -> int:
        return self.frames


@dataclass
class RpcMessage:
    frame: int
    ts: int
    client: str
    version: str
    procedure: int
    values: dict[str, list[str]]


def _ns(epoch: str) -> int:
    """Seconds since the epoch as text -> ns; a ValueError (the record's error) for a time
    the event table's 64-bit ns cannot hold (past the year 2262)."""
    seconds, _, frac = epoch.partition(".")
    ns = int(seconds) * 1_000_000_000 + int((frac + "000000000")[:9])
    if not 0 <= ns < 2**63:
        raise ValueError(f"the time {epoch} is outside what the event table holds (1970 to 2262)")
    return ns


def _errno(status: str | None) -> str | None:
    """The error name of a reply's status: its NFS name where the number is known, else
    NFSERR_ and the status as the trace wrote it (letters and digits only)."""
    if status in (None, "", "0"):
        return None
    if not status.isdigit():
        return "NFSERR_" + (re.sub(r"[^A-Za-z0-9]", "_", status)[:32] or "UNKNOWN")
    code = int(status)
    return _ERRNO.get(code, f"NFSERR_{code}")


def _hex(value: str | None) -> str | None:
    return value.lower() if value else None


class EventRows:
    """Column lists for the batch being built."""

    def __init__(self) -> None:
        self.columns: dict[str, list[object]] = {name: [] for name in EVENT_SCHEMA.names}

    def add(self, **row: object) -> None:
        for name, values in self.columns.items():
            values.append(row.get(name))

    def __len__(self) -> int:
        return len(self.columns["seq"])

    def batch(self) -> pa.RecordBatch:
        return pa.RecordBatch.from_pydict(self.columns, schema=EVENT_SCHEMA)


class RpcTraceReader:
    """A reader of one NFS trace; subclasses say where its RPC messages come from.

    ``stats`` is set once ``batches()`` is exhausted.
    """

    unit = "line"
    empty_reason = "no NFS calls in it"

    def __init__(self, path: Path, *, keep_going: bool = False) -> None:
        self.path = Path(path)
        self.keep_going = keep_going
        self.stats: NfsStats | None = None

    def batches(self) -> Iterator[pa.RecordBatch]:
        if not self.path.is_file():
            raise TraceParseError(self.path, None, "no such file", unit=self.unit)
        stats = NfsStats()
        yield from events_from_messages(self._messages(stats), stats)
        if stats.calls == 0 and not self.keep_going:
            raise TraceParseError(self.path, None, f"{self.empty_reason} ({stats.frames} NFS records)",
                                  unit=self.unit)
        self.stats = stats

    def _messages(self, stats: NfsStats) -> Iterator[RpcMessage]:
        raise NotImplementedError


@dataclass(frozen=True)
class CaptureOptions:
    """What tshark is told beyond its defaults: NFS served on other ports than 2049 (its
    decode-as, -d), and a display filter (-Y) that narrows the capture to, say, one client.
    tshark's RPC heuristics find NFS on most ports by themselves; decode-as is for where they
    cannot, as in a capture that starts in the middle of a connection."""

    nfs_ports: tuple[int, ...] = ()
    display_filter: str | None = None


class NfsReader(RpcTraceReader):
    """A pcap/pcapng capture, dissected by tshark: in one run, or with `workers` (fsbm.cluster)
    cut into parts dissected at once, by time or by connection as `cut` says
    (traces/nfs_parts.py)."""

    unit = "packet"
    empty_reason = "no NFS calls in the capture"

    def __init__(self, path: Path, *, keep_going: bool = False, capture: CaptureOptions = CaptureOptions(),
                 workers: object = None, scratch: Path | None = None, cut: str = "time") -> None:
        super().__init__(path, keep_going=keep_going)
        self.capture = capture
        self.workers = workers
        self.cut = cut
        self.scratch = scratch  # where the parts go: a directory the workers see too

    def _messages(self, stats: NfsStats) -> Iterator[RpcMessage]:
        scratch = self.scratch if self.workers is not None else None
        with tempfile.TemporaryDirectory(prefix=".fsbm-nfs-" if scratch else "fsbm-nfs-", dir=scratch) as tmp:
            capture = _readable_capture(self.path, Path(tmp))
            if self.workers is not None:
                from fsbm.traces.nfs_parts import dissected_in_parts

                parts = dissected_in_parts(capture, self.fields_command(), Path(tmp), self.workers, cut=self.cut)
                if parts is not None:
                    for part in parts:
                        self._check_tshark(part.returncode, part.stderr, 0, stats)
                    yield from self._row_messages(_one_row_a_frame(parts.rows()), stats)
                    return
            yield from self._capture_messages(capture, stats)

    def fields_command(self) -> list[str]:
        """tshark's command for the NFS fields of a capture (the capture's path goes after it)."""
        command = [_tshark(), "-n"]
        for port in (2049, *self.capture.nfs_ports):
            command += ["-d", f"tcp.port=={port},rpc", "-d", f"udp.port=={port},rpc"]
        # NFS calls and replies, and RPC frames tshark could not place (a reply whose call it
        # has not seen): those are counted, not dropped silently.
        wanted = f"rpc.program == {NFS_PROGRAM} || (rpc.msgtyp == 1 && nfs) || (rpc && !rpc.xid)"
        if self.capture.display_filter:
            wanted = f"({wanted}) && ({self.capture.display_filter})"
        command += ["-Y", wanted, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,"]
        for name in FIELDS:
            command += ["-e", name]
        return command

    def _capture_messages(self, capture: Path, stats: NfsStats) -> Iterator[RpcMessage]:
        """RPC messages in capture order, from one run of tshark's field output."""
        # A name in a damaged capture need not be UTF-8: it is kept, its bad bytes replaced.
        proc = subprocess.Popen([*self.fields_command(), "-r", str(capture)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, errors="replace",
                                bufsize=1 << 20)
        assert proc.stdout is not None and proc.stderr is not None
        read_all = False
        last_frame = [0]
        try:
            yield from self._row_messages((line.rstrip("\n").split("\t") for line in proc.stdout), stats, last_frame)
            read_all = True
        finally:
            if not read_all:
                # Stopped early (a refused packet, or the reader went away): tshark may be
                # blocked writing the rest to us, and would never close its stderr.
                proc.kill()
            stderr = proc.stderr.read()
            proc.stderr.close()
            proc.stdout.close()
            proc.wait()
        self._check_tshark(proc.returncode, stderr, last_frame[0], stats)

    def _row_messages(self, rows: Iterable[list[str]], stats: NfsStats,
                      last_frame: list[int] | None = None) -> Iterator[RpcMessage]:
        """RPC messages of tshark's field rows (frame number first), in capture order; the
        number of the last frame seen is kept in last_frame[0]."""
        last = last_frame if last_frame is not None else [0]
        for cols in rows:
            if len(cols) != len(FIELDS):
                continue
            last[0] = int(cols[0] or last[0])
            stats.frames += 1
            if cols[_IDX["_ws.malformed"]]:
                stats.malformed += 1
                if not self.keep_going:
                    raise TraceParseError(self.path, last[0], "a malformed NFS packet (tshark could not "
                                          "dissect it)", unit="packet")
                if len(stats.first_errors) < 5:
                    stats.first_errors.append(f"{self.path}:{last[0]}: a malformed NFS packet")
                continue
            if not cols[_IDX["rpc.xid"]]:
                stats.undecodable_rpc_frames += 1
                if len(stats.first_errors) < 5:
                    stats.first_errors.append(f"{self.path}:{last[0]}: an RPC frame tshark could not decode "
                                              "(a reply captured before its call?)")
                continue
            try:
                messages = list(_split_messages(cols, stats))
            except ValueError as exc:  # a field no event can hold (a time before 1970, say)
                if not self.keep_going:
                    raise TraceParseError(self.path, last[0], str(exc), unit="packet") from None
                stats.malformed += 1
                if len(stats.first_errors) < 5:
                    stats.first_errors.append(f"{self.path}:{last[0]}: {exc}")
                continue
            yield from messages

    def _check_tshark(self, returncode: int, stderr: str, last_frame: int, stats: NfsStats) -> None:
        text = " ".join(line for line in stderr.splitlines() if "Running as user" not in line).strip()
        if "cut short in the middle of a packet" in text:
            stats.cut_short = True
            if not self.keep_going:
                raise TraceParseError(self.path, last_frame + 1, "the capture is cut short in the middle of a packet "
                                      "(truncated?)", unit="packet")
            return
        if returncode != 0:
            reason = text.removeprefix("tshark: ") or f"tshark exited {returncode}"
            # tshark echoes a filter it cannot read; ours is fixed, so the fault is in what was given.
            if self.capture.display_filter and self.capture.display_filter in text:
                said = next((line.removeprefix("tshark: ") for line in stderr.splitlines()
                             if line.startswith("tshark: ")), reason)
                raise UsageError(f"--filter {self.capture.display_filter!r} is not a tshark display filter: {said}")
            raise TraceParseError(self.path, None, f"not a readable capture: {reason}", unit="packet")


def events_from_messages(messages: Iterable[RpcMessage], stats: NfsStats) -> Iterator[pa.RecordBatch]:
    """Match calls to replies over a message stream and yield event batches (pcap and Ellard)."""
    matcher = CallReplyMatcher(stats)
    rows = EventRows()
    for message in messages:
        matcher.feed(message, rows)
        if len(rows) >= _BATCH_ROWS:
            yield rows.batch()
            rows = EventRows()
    matcher.finish(rows)
    if len(rows):
        yield rows.batch()
    stats.events = matcher.seq


def _tshark() -> str:
    """tshark on PATH, or an error that says how to install it."""
    return require_program("tshark", "tshark")


def _readable_capture(path: Path, tmp: Path) -> Path:
    """tshark reads pcap, pcapng and gzip; bzip2 is unpacked to a temporary file first."""
    with open(path, "rb") as f:
        magic = f.read(3)
    if magic != b"BZh":
        return path
    target = tmp / "capture.pcap"
    try:
        with bz2.open(path, "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except (OSError, EOFError) as exc:
        raise TraceParseError(path, None, f"the bzip2 data is damaged ({exc})", unit="packet") from exc
    return target


def _one_row_a_frame(rows: Iterable[list[str]]) -> Iterator[list[str]]:
    """Rows of a capture dissected in parts, in frame order, with the rows of one frame made
    one, as one tshark aggregates them: a segment cut where a record begins leaves a row in
    each of two parts (traces/nfs_parts.py), the earlier part's messages first."""
    held: list[str] | None = None
    for cols in rows:
        if held is not None and cols[0] == held[0] and len(cols) == len(held) == len(FIELDS):
            messages = [",".join(v for v in pair if v) for pair in zip(held[MESSAGE_FIELDS_FROM:-1],
                                                                       cols[MESSAGE_FIELDS_FROM:-1])]
            held = held[:MESSAGE_FIELDS_FROM] + messages + [held[-1] or cols[-1]]
            continue
        if held is not None:
            yield held
        held = cols
    if held is not None:
        yield held


def _split_messages(cols: list[str], stats: NfsStats) -> Iterator[RpcMessage]:
    """One frame's RPC messages.  Several in one frame (TCP) have their fields aggregated
    by tshark: a field whose list divides evenly among the messages is split evenly (each
    message contributed as many values); any other goes to the first message and the frame
    is counted as ambiguous."""
    xids = cols[_IDX["rpc.xid"]].split(",")
    n = len(xids)
    if n > 1:
        stats.frames_with_several_messages += 1
    src = cols[_IDX["ip.src"]] or cols[_IDX["ipv6.src"]]
    dst = cols[_IDX["ip.dst"]] or cols[_IDX["ipv6.dst"]]
    sport = (cols[_IDX["tcp.srcport"]] or cols[_IDX["udp.srcport"]]).split(",")[0]
    dport = (cols[_IDX["tcp.dstport"]] or cols[_IDX["udp.dstport"]]).split(",")[0]
    frame, ts = int(cols[0]), _ns(cols[1])
    per_message = {name: cols[_IDX[name]].split(",") if cols[_IDX[name]] else []
                   for name in FIELDS[MESSAGE_FIELDS_FROM:-1]}
    ambiguous = False
    for k in range(n):
        values = {}
        for name, items in per_message.items():
            if n == 1:
                values[name] = items
            elif len(items) % n == 0:
                chunk = len(items) // n
                values[name] = items[k * chunk:(k + 1) * chunk]
            else:
                values[name] = items if k == 0 else []
                ambiguous = ambiguous or name not in PAIRED_BY_ID
        msgtyp = (values["rpc.msgtyp"] or ["0"])[0]
        version = (values["rpc.programversion"] or [""])[-1]
        procedure = int((values["rpc.procedure"] or ["0"])[0])
        client = f"{src}:{sport}" if msgtyp == "0" else f"{dst}:{dport}"
        server = f"{dst}:{dport}" if msgtyp == "0" else f"{src}:{sport}"
        message = RpcMessage(frame, ts, client, version, procedure, values)
        message.values["_key"] = [client, server, xids[k]]
        message.values["_type"] = [msgtyp]
        yield message
    if ambiguous:
        stats.ambiguous_frames += 1


def _host(client: str) -> str:
    """A client's address without its port: the actor its events carry."""
    return client.rsplit(":", 1)[0]


class CallReplyMatcher:
    """Pairs calls and replies; emits events when a reply arrives (or at the end)."""

    def __init__(self, stats: NfsStats) -> None:
        self.stats = stats
        self.pending: dict[tuple[str, ...], RpcMessage] = {}
        self.answered: OrderedDict[tuple[str, ...], None] = OrderedDict()
        # (directory handle, name) -> the handle a LOOKUP or CREATE reply gave that name, so a
        # REMOVE, RMDIR or RENAME, which name only the directory and the name, is an event of
        # the file it acts on (what it held, where a replay finds it).
        self.children: OrderedDict[tuple[str, str], str] = OrderedDict()
        self.seq = 0
        self.timeline = NfsTimeline()

    def feed(self, m: RpcMessage, rows: EventRows) -> None:
        key = tuple(m.values["_key"])
        if m.values["_type"][0] == "0":
            self.stats.calls += 1
            if key in self.pending or key in self.answered:
                self.stats.retransmissions += 1  # the same xid again: one operation, counted once
                return
            self.pending[key] = m
            self.timeline.call(_host(m.client), m.ts, _host(m.client) == _host(key[1]))
            return
        self.stats.replies += 1
        call = self.pending.pop(key, None)
        if call is None:
            if key in self.answered:
                self.stats.duplicate_replies += 1
            else:
                self.stats.replies_without_call += 1
            return
        self.answered[key] = None
        if len(self.answered) > _ANSWERED_MEMORY:
            self.answered.popitem(last=False)
        self.timeline.reply(_host(call.client), call.ts, m.ts)
        self._emit(call, m, rows)

    def finish(self, rows: EventRows) -> None:
        for call in self.pending.values():
            if call.values.get("_short"):
                self.stats.malformed += 1  # truncated, and no reply to confirm it was a call
                continue
            self.stats.calls_without_reply += 1
            self._emit(call, None, rows)
        self.pending.clear()
        self.stats.timeline = self.timeline.counts()

    def _emit(self, call: RpcMessage, reply: RpcMessage | None, rows: EventRows) -> None:
        dur = reply.ts - call.ts if reply else None
        if call.version == "4" and call.procedure == 1:
            self._emit_compound(call, reply, dur, rows)
            return
        names = V2_PROCEDURES if call.version == "2" else V3_PROCEDURES
        if call.version == "4":
            name = "NULL" if call.procedure == 0 else f"PROC{call.procedure}"
        else:
            name = names[call.procedure] if call.procedure < len(names) else f"PROC{call.procedure}"
        cv, rv = call.values, reply.values if reply else {}
        fhs = cv["nfs.fh.hash"]
        names_ = cv["nfs.name"]
        file = _hex(fhs[0]) if fhs else None
        path = names_[0] if names_ else None
        path2 = names_[1] if len(names_) > 1 else None
        status = (rv.get("nfs.status") or rv.get("nfs.status2") or [None])[0] if reply else None
        succeeded = status in (None, "0")  # or not known to have failed: no reply
        if name in ("LOOKUP", "CREATE", "MKDIR", "SYMLINK", "MKNOD") and file:
            reply_fh = rv.get("nfs.fh.hash") or []
            directory = file
            file = _hex(reply_fh[0]) if reply_fh and succeeded else f"{file}/{path}"
            if reply_fh and succeeded and path:
                self._remember(directory, path, file)
        elif name in ("REMOVE", "RMDIR", "RENAME") and file and path:
            renamed_to = (_hex(fhs[1]), path2) if name == "RENAME" and len(fhs) > 1 and path2 else None
            file = self._unlinked(file, path, succeeded, renamed_to)
        offset = size = ret = None
        if name in ("READ", "WRITE"):
            offset = _first_int(cv, "nfs.offset3", "nfs.read.offset", "nfs.write.offset")
            size = _first_int(cv, "nfs.count3", "nfs.read.count", "nfs.write.data_length")
            if reply and succeeded:
                ret = _first_int(rv, "nfs.count3", "nfs.read.data_length", "nfs.write.data_length")
        elif name == "COMMIT":
            offset = _first_int(cv, "nfs.offset3")
            size = _first_int(cv, "nfs.count3")
        elif name in ("READDIR", "READDIRPLUS") and reply and succeeded:
            ret = listed_bytes(rv)
        if ret is None and reply:
            ret = 0 if succeeded else -1
        self._add(rows, call, dur, f"NFS{call.version}.{name}", NFS_OPERATIONS.get(name, "other"), file, path,
                  path2, offset, size, ret, _errno(status))
        if name == "READDIRPLUS" and reply and succeeded and file:
            for entry, handle, entry_size in listed_entries(rv):
                entry_file = handle or f"{file}/{entry}"
                if handle:
                    self._remember(file, entry, handle)
                self._add(rows, call, None, LISTED_ENTRY_ORIG, "stat", entry_file, entry, None, None, entry_size, 0,
                          None)

    def _remember(self, directory: str, name: str, handle: str) -> None:
        self.children[(directory, name)] = handle
        self.children.move_to_end((directory, name))
        if len(self.children) > _CHILDREN_MEMORY:
            self.children.popitem(last=False)

    def _unlinked(self, directory: str, name: str, succeeded: bool, renamed_to: tuple[str, str] | None = None) -> str:
        """The file a REMOVE, RMDIR or RENAME of `name` in `directory` acts on; once it
        succeeded the name is forgotten, and a renamed file remembered under `renamed_to`
        (its new directory and name)."""
        file = self.children.get((directory, name), f"{directory}/{name}")
        if succeeded:
            self.children.pop((directory, name), None)
            if renamed_to is not None:
                self._remember(*renamed_to, file)
        return file

    def _emit_compound(self, call: RpcMessage, reply: RpcMessage | None, dur: int | None, rows: EventRows) -> None:
        """Each op of a COMPOUND is an event.  The current handle follows PUTFH, SAVEFH and
        RESTOREFH, and LOOKUP, OPEN and CREATE move it to the file they name: the handle the
        compound's GETFH returned for it where it asked, else "directory/name".  tshark puts
        v4 names in nfs.pathname.component (older ones in nfs.name)."""
        cv = call.values
        ops = [int(o) for o in cv["nfs.opcode"]]
        statuses = (reply.values.get("nfs.status") or [])[1:] if reply else []
        fhs = list(cv["nfs.fh.hash"])
        names = list(cv.get("nfs.pathname.component") or cv["nfs.name"])
        claims = list(cv.get("nfs.open.claim_type") or [])
        offsets, counts = list(cv["nfs.offset4"]), list(cv["nfs.count4"])
        lengths = list(cv["nfs.write.data_length"])
        r_counts = list(reply.values.get("nfs.count4") or []) if reply else []
        r_lengths = list(reply.values.get("nfs.read.data_length") or []) if reply else []
        handles = _getfh_handles(ops, statuses, reply)
        current: str | None = None
        saved: str | None = None
        for i, code in enumerate(ops):
            name = V4_OPERATIONS.get(code, f"OP{code}")
            executed = reply is None or i < len(statuses)
            status = statuses[i] if i < len(statuses) else None
            succeeded = status in (None, "0")
            path = path2 = offset = size = ret = None
            if name == "PUTFH":
                current = _hex(fhs.pop(0)) if fhs else current
            elif name in ("PUTROOTFH", "PUTPUBFH"):
                current = "root"
            elif name == "SAVEFH":
                saved = current
            elif name == "RESTOREFH":
                current = saved
            elif name in V4_NAMING_OPS or (name == "OPEN" and (claims.pop(0) if claims else "0") in V4_NAMING_CLAIMS):
                path = names.pop(0) if names else None
            elif name == "RENAME":
                path, path2 = (names.pop(0) if names else None), (names.pop(0) if names else None)
            if name in ("READ", "WRITE", "COMMIT"):
                offset = int(offsets.pop(0)) if offsets else None
                if name == "WRITE":
                    size = int(lengths.pop(0)) if lengths else None
                    ret = int(r_counts.pop(0)) if r_counts and succeeded else None
                elif name == "READ":
                    size = int(counts.pop(0)) if counts else None
                    ret = int(r_lengths.pop(0)) if r_lengths and succeeded else None
                else:
                    size = int(counts.pop(0)) if counts else None
            elif name == "READDIR" and reply is not None and succeeded:
                ret = listed_bytes(reply.values)
            if not executed:
                continue  # an earlier op failed: this one never ran
            if ret is None and reply is not None:
                ret = 0 if succeeded else -1
            if name == "GETFH" and i in handles:
                current = handles[i]  # the handle itself: PUTROOTFH's "root" is a file like any other
            file = current
            if name in ("LOOKUP", "OPEN", "CREATE") and path and current:
                handle = _handle_got(ops, handles, i) if succeeded else None
                file = handle or f"{current}/{path}"
                if handle:
                    self._remember(current, path, handle)
            elif name == "REMOVE" and path and current:
                file = self._unlinked(current, path, succeeded)
            elif name == "RENAME" and path and saved:
                file = self._unlinked(saved, path, succeeded, (current, path2) if current and path2 else None)
            elif name == "LINK" and saved:  # a new name, `path` in the current directory, for the saved file
                file = saved
                if path and current and succeeded:
                    self._remember(current, path, saved)
            self._add(rows, call, dur, f"NFS4.{name}", NFS_OPERATIONS.get(name, "other"), file, path, path2,
                      offset, size, ret, _errno(status))
            if name in ("LOOKUP", "OPEN", "CREATE") and path and succeeded:
                current = file

    def _add(self, rows: EventRows, call: RpcMessage, dur: int | None, orig: str, op: str, file: str | None,
             path: str | None, path2: str | None, offset: int | None, size: int | None, ret: int | None,
             errno: str | None) -> None:
        rows.add(seq=self.seq, ts=call.ts, dur=dur, actor=_host(call.client), op=op, orig=orig,
                 file=file or f"?fh/{call.client}", path=path, path2=path2, offset=offset, size=size, ret=ret,
                 errno=errno, record=call.frame)
        self.seq += 1


def _getfh_handles(ops: list[int], statuses: list[str], reply: RpcMessage | None) -> dict[int, str]:
    """Op index -> the handle each GETFH of a COMPOUND returned, read from the reply's handles
    in order; none where their count is not that of the GETFHs that succeeded (a reply
    whose attributes carry handles too, or a frame tshark could not split)."""
    if reply is None:
        return {}
    got = [i for i, code in enumerate(ops) if code == GETFH and i < len(statuses) and statuses[i] == "0"]
    returned = reply.values.get("nfs.fh.hash") or []
    if len(returned) != len(got):
        return {}
    return {i: _hex(handle) for i, handle in zip(got, returned)}


def _handle_got(ops: list[int], handles: dict[int, str], named: int) -> str | None:
    """The handle a GETFH returned for the file the op at `named` moved to, if one asked
    before the current handle moved again."""
    for i in range(named + 1, len(ops)):
        if i in handles:
            return handles[i]
        if V4_OPERATIONS.get(ops[i]) in V4_MOVING_OPS:
            return None
    return None


def listed_entries(reply: dict[str, list[str]]) -> list[tuple[str, str | None, int | None]]:
    """(name, handle, size) of each entry a v3 READDIRPLUS reply returned, but "." and "..".
    The handle is None where the reply's handles do not pair one to one with its names (an
    entry sent without one).  The size is the one in the attributes of the entry's file id
    (the directory's own attributes come first, and an entry may be sent without any), or
    None."""
    names = reply.get("nfs.readdirplus.entry.name") or []
    handles = reply.get("nfs.fh.hash") or []
    paired = [_hex(h) for h in handles] if len(handles) == len(names) else [None] * len(names)
    ids = reply.get("nfs.readdirplus.entry.fileid") or []
    size_of = dict(zip(reply.get("nfs.fattr3.fileid") or [], reply.get("nfs.fattr3.size") or []))
    sizes = [int(size_of[i]) if size_of.get(i, "").isdigit() else None for i in ids] if len(ids) == len(names) \
        else [None] * len(names)
    return [(name, handle, size) for name, handle, size in zip(names, paired, sizes) if name not in (".", "..")]


def listed_bytes(reply: dict[str, list[str]]) -> int:
    """What a getdents64 returning the entries this READDIR reply names would have returned:
    the listing's size, by which the predictor prices it as it prices a traced getdents."""
    return sum((DIRENT_HEAD_BYTES + len(name.encode()) + 1 + 7) // 8 * 8
               for field_name in LISTED_NAMES for name in reply.get(field_name) or [])


def _first_int(values: dict[str, list[str]], *names: str) -> int | None:
    for name in names:
        items = values.get(name) or []
        if items and items[0]:
            return int(items[0])
    return None

"""Ellard's nfsdump text format (Harvard NFS traces) -> the event table.

One line per call or reply: "time src dst T|U C3|R3|C2|R2 xid proc name key value ...",
numbers in hex but times (format description in shared/data/nfs/ellard-text).  Lines
become the same RPC messages a capture gives, and the same call/reply matcher
(fsbm.traces.nfs) turns them into events, so both NFS sources follow one set of rules.
File identity is the CRC-32 of the file handle, as tshark's nfs.fh.hash is.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from fsbm.traces.errors import TraceParseError
from fsbm.traces.nfs import NfsStats, RpcMessage, RpcTraceReader, _ns

_SKIP = {"con", "len", "status=XXX", "pl", "=", "XXX"}


def _fh_hash(fh: str) -> str:
    try:
        return f"0x{zlib.crc32(bytes.fromhex(fh)):08x}"
    except ValueError:
        return fh


def _endpoint(text: str) -> str:
    """'31.03f7' (anonymised host 0x31, port 0x3f7) -> '0.0.0.49:1015', the form DataSeries prints."""
    host, _, port = text.partition(".")
    number = int(host, 16)
    address = ".".join(str((number >> shift) & 0xFF) for shift in (24, 16, 8, 0))
    return f"{address}:{int(port, 16) if port else 0}"


def _pairs(tokens: list[str]) -> dict[str, list[str]]:
    """The key/value tail of a line: 'fh X name "a b" off 0 count 2000 ...'."""
    values: dict[str, list[str]] = {}
    i = 0
    while i + 1 < len(tokens):
        key, value = tokens[i], tokens[i + 1]
        if key in _SKIP or key.startswith("status="):
            i += 1
            continue
        if value.startswith('"') and not (len(value) > 1 and value.endswith('"')):
            j = i + 1
            while j + 1 < len(tokens) and not tokens[j].endswith('"'):
                j += 1
            value = " ".join(tokens[i + 1:j + 1])
            i = j + 1
        else:
            i += 2
        values.setdefault(key, []).append(value.strip('"'))
    return values


def _message(line: str, number: int) -> RpcMessage:
    """One line as an RPC message; ValueError says what is wrong with it."""
    tokens = line.split()
    if len(tokens) < 8:
        raise ValueError("expected 'time src dst T|U C3|R3 xid proc name ...'")
    ts, src, dst, proto, kind, xid, proc, name = tokens[:8]
    if proto not in ("T", "U") or len(kind) != 2 or kind[0] not in "CR" or kind[1] not in "234":
        raise ValueError(f"expected T|U then C2/C3/R2/R3, got {proto!r} {kind!r}")
    is_call = kind[0] == "C"
    rest = tokens[8:]
    values: dict[str, list[str]] = {}
    if "SHORT PACKET" in line:
        # The capture cut this record short: the procedure is known, its arguments are not.
        # A call like this becomes an event only if its reply confirms it (see CallReplyMatcher).
        if not is_call:
            raise ValueError("a SHORT PACKET reply: the capture truncated it")
        values["_short"] = ["1"]
        for key in ("nfs.fh.hash", "nfs.name"):
            values[key] = []
    elif is_call:
        pairs = _pairs(rest)
        values["nfs.fh.hash"] = [_fh_hash(v) for v in pairs.get("fh", []) + pairs.get("fh2", [])]
        values["nfs.name"] = pairs.get("name", []) + pairs.get("name2", [])
        if "off" in pairs:
            values["nfs.offset3"] = [str(_hex(pairs["off"][0], "offset"))]
        if "count" in pairs:
            values["nfs.count3"] = [str(_hex(pairs["count"][0], "count"))]
    else:
        status = rest[0] if rest else ""
        if status.startswith("status="):  # some replies give the status as status=N
            status = status.split("=", 1)[1]
            values["nfs.status"] = [status]
        else:
            values["nfs.status"] = ["0" if status == "OK" else str(_hex(status, "status")) if status else ""]
        pairs = _pairs(rest[1:])
        if "fh" in pairs:
            values["nfs.fh.hash"] = [_fh_hash(pairs["fh"][0])]
        if "count" in pairs:
            values["nfs.count3"] = [str(_hex(pairs["count"][0], "count"))]
    client, server = (_endpoint(src), _endpoint(dst)) if is_call else (_endpoint(dst), _endpoint(src))
    values["_key"] = [client, server, xid]
    values["_type"] = ["0" if is_call else "1"]
    return RpcMessage(number, _ns(ts), client, kind[1], _hex(proc, "procedure"), values)


# The event table keeps numbers as signed 64-bit integers.
_LARGEST = 2**63 - 1


def _hex(text: str, what: str) -> int:
    """A hexadecimal field of the record; a ValueError (the line's error) if it is not one,
    is negative, or is more than the event table can hold."""
    value = int(text, 16)
    if value < 0:
        raise ValueError(f"the {what} {text} is negative")
    if value > _LARGEST:
        raise ValueError(f"the {what} 0x{text} is more than 2^63 - 1")
    return value


class EllardReader(RpcTraceReader):
    """An nfsdump text file."""

    empty_reason = "no NFS calls in it: is it nfsdump text?"

    def _messages(self, stats: NfsStats) -> Iterator[RpcMessage]:
        with open(self.path, encoding="utf-8", errors="replace") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                stats.frames += 1
                try:
                    yield _message(line, number)
                except ValueError as exc:
                    if not self.keep_going:
                        raise TraceParseError(self.path, number, str(exc)) from None
                    stats.malformed += 1
                    if len(stats.first_errors) < 5:
                        stats.first_errors.append(f"{self.path}:{number}: {exc}")

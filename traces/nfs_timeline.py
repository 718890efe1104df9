"""What an NFS capture says about its clients' time outside the server.

A client waits while it has a call outstanding; between its last reply and its next call it
does its own work (its programs' computing, its local disk, other servers).  Followed in
capture order, one client's calls and replies give, exactly and in constant memory per
client:
- its busy time: the union of the intervals it had at least one call outstanding;
- its idle time: the rest of its span, from its first call to its last reply;
- its busy episodes: each start of a stretch with something outstanding;
- its floor: the shortest reply time it saw, the round trip and the server's least handling.

The counts are the strace timeline's (fsbm.documents.Timeline), read the same way: clients
are its processes, each client's span its lifetime, and its time outside the server
(`user_signed_ns`) is its idle time plus one floor per busy episode (the network and the
server's RPC handling, which no candidate filesystem changes).  The time in calls
(`file_calls_signed_ns`) is the busy time less those floors.  A client that called a server
at its own address (`same_host_clients`) shared its host with the server, and so with
whatever captured their traffic (predictor/capture_cost.py).  A call with no reply ends
nothing: its client is busy until its last message.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class _Client:
    first_ns: int
    last_ns: int
    outstanding: int = 0
    busy_since_ns: int = 0
    busy_ns: int = 0
    episodes: int = 0
    floor_ns: int | None = None
    same_host: bool = False  # it called a server at its own address (the loopback)


class NfsTimeline:
    """Busy and idle time per client, fed calls and replies in capture order."""

    def __init__(self) -> None:
        self._clients: dict[str, _Client] = {}
        self.calls = 0
        self.replies = 0

    def call(self, client: str, ts: int, same_host: bool = False) -> None:
        """A new call (not a retransmission) from `client` at `ts` (ns); `same_host`: to a
        server at the client's own address."""
        self.calls += 1
        c = self._clients.get(client)
        if c is None:
            c = self._clients[client] = _Client(ts, ts)
        c.same_host = c.same_host or same_host
        c.last_ns = max(c.last_ns, ts)
        if c.outstanding == 0:
            c.busy_since_ns = ts
            c.episodes += 1
        c.outstanding += 1

    def reply(self, client: str, call_ts: int, ts: int) -> None:
        """The reply at `ts` to `client`'s call made at `call_ts`."""
        c = self._clients.get(client)
        if c is None or c.outstanding == 0:  # its call came before the capture began
            return
        self.replies += 1
        c.last_ns = max(c.last_ns, ts)
        if ts >= call_ts and (c.floor_ns is None or ts - call_ts < c.floor_ns):
            c.floor_ns = ts - call_ts
        c.outstanding -= 1
        if c.outstanding == 0:
            c.busy_ns += max(ts - c.busy_since_ns, 0)

    def counts(self) -> dict[str, int]:
        """The Timeline's counts (module docstring); empty where nothing was called."""
        if not self._clients:
            return {}
        span = max(c.last_ns for c in self._clients.values()) - min(c.first_ns for c in self._clients.values())
        lifetimes = outside = inside = 0
        for c in self._clients.values():
            busy = c.busy_ns + (c.last_ns - c.busy_since_ns if c.outstanding else 0)
            life = c.last_ns - c.first_ns
            network = min((c.floor_ns or 0) * c.episodes, busy)
            lifetimes += life
            outside += life - busy + network
            inside += busy - network
        return {"processes": len(self._clients), "same_host_clients": sum(c.same_host for c in self._clients.values()),
                "calls": self.calls, "timed_calls": self.replies,
                "lifetimes_ns": lifetimes, "span_ns": span, "user_ns": outside, "user_signed_ns": outside,
                "file_calls_excess_ns": inside, "file_calls_signed_ns": inside}

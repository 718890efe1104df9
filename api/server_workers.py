"""`fsbm serve --workers N`: N server processes, each listening on a socket of its own bound to
the same address (SO_REUSEPORT), so the kernel spreads connections over them as they arrive.

With one listening socket shared by every process (uvicorn's own workers), whichever process
wakes first accepts every connection then waiting.  32 clients connecting at once were split
31 to 1 that way, and each request's latency became that of the queue of 31 on one process
while the other idled.  With a socket each, the kernel picks the process for each new
connection by a hash of its addresses.

This module is the supervisor: it keeps the port (a socket bound to it that never listens,
so port 0 is chosen once for all), starts the processes, starts again one that dies, and
stops them all on SIGINT or SIGTERM.  A process that dies within STARTUP_S of its start (the
app could not be built) stops the whole server with an error instead of being started again
and again.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import socket
import time
from typing import Any

from fsbm.errors import FsbmError

STARTUP_S = 10.0  # a process that dies sooner than this after its start failed to start
STOP_S = 10.0  # how long the processes get to finish their requests once told to stop
BACKLOG = 2048  # connections waiting to be accepted, per process (uvicorn's default)


def _bound(host: str, port: int, shared: bool = True) -> socket.socket:
    """A TCP socket bound to (host, port); `shared`: one that other sockets of this user may bind too."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if shared:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise FsbmError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def _serve(app: str, address: tuple[str, int], log_level: str) -> None:
    """One server process: its own listening socket on `address`, and uvicorn on it until it
    is told to stop (uvicorn's own SIGINT and SIGTERM handlers finish the open requests)."""
    import uvicorn

    sock = _bound(*address)
    sock.listen(BACKLOG)
    config = uvicorn.Config(app, factory=True, log_level=log_level)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl-C reaches every process of the group; uvicorn has finished by then
        pass


def serve(app: str, host: str, port: int, workers: int, log_level: str = "warning") -> None:
    """Run `workers` processes of the app factory `app` ("module:function") on host:port until
    SIGINT or SIGTERM; FsbmError if the port cannot be had or a process fails to start."""
    if port:
        # Sockets that share a port spread connections over them whoever opened them: another
        # server of this user listening there would take a share of ours.  Be alone on it.
        _bound(host, port, shared=False).close()
    keeper = _bound(host, port)
    address = keeper.getsockname()[:2]
    context = multiprocessing.get_context("spawn")
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True

    def start() -> tuple[Any, float]:
        process = context.Process(target=_serve, args=(app, address, log_level), name="fsbm serve worker")
        process.start()
        return process, time.monotonic()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    running = [start() for _ in range(workers)]
    try:
        while not stopping:
            multiprocessing.connection.wait([process.sentinel for process, _ in running], timeout=0.5)
            for i, (process, started) in enumerate(running):
                if process.is_alive() or stopping:
                    continue
                if time.monotonic() - started < STARTUP_S:
                    raise FsbmError(f"a server process exited with status {process.exitcode} as it started "
                                    "(its error is above)")
                running[i] = start()
    finally:
        for process, _ in running:
            if process.is_alive():
                process.terminate()
        deadline = time.monotonic() + STOP_S
        for process, _ in running:
            process.join(max(deadline - time.monotonic(), 0.0))
            if process.is_alive():
                process.kill()
                process.join()
        keeper.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)

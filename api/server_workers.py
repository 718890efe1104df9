"""`fsbm serve --workers N`: N server processes behind one listening socket, which this
supervisor holds; it accepts each connection and hands it to the processes in turn.

How connections reach the processes decides the latency under load, since each client keeps
its connection and a process serves its connections one request at a time.  With one
listening socket shared by every process (uvicorn's own workers), whichever process wakes
first accepts every connection then waiting: 32 clients connecting at once were split 31 to
1.  With a socket each on the port (SO_REUSEPORT) the kernel picks a process by a hash of
the connection's addresses, which split 32 connections 13/19, 11/21 and 16/16 in three runs;
the process with 21 had a queue twice as long as the other's.  Handed round in turn, as
Node's cluster module does, N processes get within one connection of each other.

Each process receives its connections over a Unix socket (SCM_RIGHTS) and gives them to
uvicorn as accepted sockets; it stops when that socket closes, so none outlives the
supervisor.  The supervisor starts the processes, starts again one that dies, and stops them
all on SIGINT or SIGTERM.  A process that dies before it says it is ready (the app could not
be built) stops the whole server with an error instead of being started again and again.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import multiprocessing.connection
import signal
import socket
import time
from dataclasses import dataclass
from typing import Any

from fsbm.errors import FsbmError

READY = b"r"  # what a server process says to the supervisor once its app is built
STOP_S = 10.0  # how long the processes get to finish their requests once told to stop
BACKLOG = 2048  # connections waiting to be accepted (uvicorn's default)


def _listening(host: str, port: int) -> socket.socket:
    """A TCP socket listening on (host, port), alone on it; FsbmError naming the address if it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise FsbmError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.setblocking(False)
    return sock


def _serve(app: str, channel: socket.socket, log_level: str) -> None:
    """One server process: uvicorn on the connections the supervisor hands over `channel`,
    until it is told to stop (uvicorn's own SIGINT and SIGTERM handlers finish the open
    requests) or the supervisor is gone."""
    import uvicorn

    class HandedConnections(uvicorn.Server):
        """uvicorn with no listening socket of its own: each connection arrives over `channel`."""

        handing: set[asyncio.Task]  # connections being set up (the loop keeps only weak references to tasks)

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=[])  # the app and its lifespan, and no listener
            self.handing = set()
            channel.send(READY)
            loop = asyncio.get_running_loop()
            channel.setblocking(False)
            loop.add_reader(channel.fileno(), self._take, loop)

        def _connection(self) -> asyncio.Protocol:
            # What uvicorn's own listener builds for each connection it accepts.
            return self.config.http_protocol_class(config=self.config, server_state=self.server_state,
                                                   app_state=self.lifespan.state)

        def _take(self, loop: asyncio.AbstractEventLoop) -> None:
            while True:
                try:
                    message, fds, _, _ = socket.recv_fds(channel, 1, 1)
                except BlockingIOError:
                    return
                if not message and not fds:  # the supervisor has gone: stop as on SIGTERM
                    loop.remove_reader(channel.fileno())
                    self.should_exit = True
                    return
                for fd in fds:
                    connection = socket.socket(fileno=fd)
                    connection.setblocking(False)
                    task = loop.create_task(loop.connect_accepted_socket(self._connection, connection))
                    self.handing.add(task)
                    task.add_done_callback(self.handing.discard)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            asyncio.get_running_loop().remove_reader(channel.fileno())
            await super().shutdown(sockets)

    config = uvicorn.Config(app, factory=True, log_level=log_level)
    try:
        HandedConnections(config).run()
    except KeyboardInterrupt:  # Ctrl-C reaches every process of the group; uvicorn has finished by then
        pass


@dataclass
class _Worker:
    process: Any
    channel: socket.socket  # the supervisor's end of the Unix socket the connections go over
    ready: bool = False  # it has said its app is built (READY)


def serve(app: str, host: str, port: int, workers: int, log_level: str = "warning") -> None:
    """Run `workers` processes of the app factory `app` ("module:function") on host:port until
    SIGINT or SIGTERM; FsbmError if the port cannot be had or a process fails to start."""
    listener = _listening(host, port)
    context = multiprocessing.get_context("spawn")
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True

    def start() -> _Worker:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        process = context.Process(target=_serve, args=(app, theirs, log_level), name="fsbm serve worker")
        process.start()
        theirs.close()
        ours.setblocking(False)
        return _Worker(process, ours)

    def hand_over(connection: socket.socket, turn: int) -> None:
        """Give the connection to the process whose turn it is, or the next that has room; to a
        process still starting only when none is ready.  With no room anywhere it is dropped
        (the caller closes its copy)."""
        order = [running[(turn + i) % len(running)] for i in range(len(running))]
        for worker in [w for w in order if w.ready] or order:
            try:
                socket.send_fds(worker.channel, [b"c"], [connection.fileno()])
                return
            except OSError:  # its queue is full (BlockingIOError), or it has just died
                continue

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    running = [start() for _ in range(workers)]
    turn = 0
    try:
        while not stopping:
            ready = multiprocessing.connection.wait(
                [listener, *(w.process.sentinel for w in running), *(w.channel for w in running if not w.ready)],
                timeout=0.5)
            for worker in running:
                if not worker.ready and worker.channel in ready:
                    try:
                        worker.ready = worker.channel.recv(1) == READY
                    except OSError:  # it died as it started: seen below
                        pass
            while listener in ready and not stopping:
                try:
                    connection, _ = listener.accept()
                except BlockingIOError:
                    break
                with connection:  # the process holds its own copy once handed over
                    hand_over(connection, turn)
                turn = (turn + 1) % len(running)
            for i, worker in enumerate(running):
                if worker.process.is_alive() or stopping:
                    continue
                if not worker.ready:
                    raise FsbmError(f"a server process exited with status {worker.process.exitcode} as it started "
                                    "(its error is above)")
                worker.channel.close()
                running[i] = start()
    finally:
        listener.close()
        for worker in running:
            if worker.process.is_alive():
                worker.process.terminate()
        deadline = time.monotonic() + STOP_S
        for worker in running:
            worker.process.join(max(deadline - time.monotonic(), 0.0))
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.channel.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)

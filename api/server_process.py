"""Starting `fsbm serve` from another program (the API benchmark, the tests): a free port,
and waiting until it answers.  One helper, so a server that never came up is reported the
same way everywhere instead of being timed or tested against as if it had."""

from __future__ import annotations

import socket
import subprocess
import time

import httpx

from fsbm.errors import FsbmError


def free_port() -> int:
    """A TCP port on the loopback that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_healthy(base: str, server: subprocess.Popen, seconds: float = 20.0) -> None:
    """Return once GET {base}/healthz answers 200; raise FsbmError, with what the server wrote
    to a piped standard error, if it exits or has not answered within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            break
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    said = server.stderr.read() if server.stderr is not None and server.poll() is not None else ""
    state = f"exited with status {server.returncode}" if server.poll() is not None else \
        f"did not answer {base}/healthz within {seconds:g} s"
    raise FsbmError(f"fsbm serve {state}" + (f": {said.strip()[-2000:]}" if said else ""))

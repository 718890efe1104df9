"""A real NFS server on this machine's loopback, serving directories of the candidates.

The kernel here has no NFS server (nor client), so the server is NFS-Ganesha, in user space,
with its VFS backend: every NFS call it serves becomes the system calls on the exported
filesystem that a kernel server would make (a WRITE a pwrite, a COMMIT an fsync, a CREATE an
open with O_CREAT).  It speaks NFSv3 over TCP on port 2049, so tshark decodes its traffic as it
decodes any server's; its MOUNT service registers with rpcbind, started here as this process's
child where none runs.  Its configuration, log and state stay in the directory it is given.

Starting one takes a tenth of a second, so a validation starts one for every cold run: it
holds no handle or attribute cache of the run before.  tshark records its traffic on the
loopback (`capturing`).
"""

from __future__ import annotations

import re
import shutil
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from fsbm.errors import FsbmError

NFS_PORT = 2049
RPCBIND_PORT = 111
HOST = "127.0.0.1"
TOOLS = {"ganesha.nfsd": "nfs-ganesha", "rpcbind": "rpcbind", "nfs-cp": "libnfs-utils"}
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
READY_LINE = "NFS SERVER INITIALIZED"


@dataclass(frozen=True)
class NfsServer:
    """A running server: the directories it exports, each under its own path."""

    exports: tuple[Path, ...]
    log: Path

    def url(self, path: Path) -> str:
        """The libnfs URL of `path`, a file or directory under one of the exports."""
        path = Path(path)
        if not any(path == export or export in path.parents for export in self.exports):
            raise FsbmError(f"{path} is not under any directory this NFS server exports")
        return f"nfs://{HOST}{path}"


def missing_tools() -> list[str]:
    """The Debian packages whose programs the server and its clients need and this machine
    lacks (`make deps` installs them)."""
    return sorted({package for tool, package in TOOLS.items() if shutil.which(tool) is None})


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((HOST, port)) == 0


def _configuration(exports: tuple[Path, ...], home: Path) -> str:
    """Ganesha's configuration: NFSv3 on TCP only, root not squashed (the runs are root's),
    its NFSv4 recovery state (unused) under `home`."""
    blocks = [
        "NFS_CORE_PARAM {\n  Protocols = 3;\n  NFS_Port = %d;\n  Bind_addr = %s;\n"
        "  Enable_NLM = false;\n  Enable_RQUOTA = false;\n}\n" % (NFS_PORT, HOST),
        "NFSV4 {\n  Graceless = true;\n  RecoveryBackend = fs;\n  RecoveryRoot = \"%s\";\n}\n" % (home / "recovery"),
    ]
    for number, export in enumerate(exports, start=1):
        blocks.append(
            "EXPORT {\n  Export_Id = %d;\n  Path = \"%s\";\n  Pseudo = \"%s\";\n  Access_Type = RW;\n"
            "  Squash = No_Root_Squash;\n  Protocols = 3;\n  Transports = TCP;\n  SecType = sys;\n"
            "  FSAL { Name = VFS; }\n}\n" % (number, export, export))
    return "\n".join(blocks)


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if it has not gone within STOP_TIMEOUT_S."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def _rpcbind() -> Iterator[None]:
    """rpcbind for the server's MOUNT service: the one running, or one started as this
    process's child for as long as the server runs."""
    if _listening(RPCBIND_PORT):
        yield
        return
    process = subprocess.Popen(["rpcbind", "-f"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _listening(RPCBIND_PORT):
            if process.poll() is not None:
                raise FsbmError(f"rpcbind exited ({process.returncode}): "
                                f"{process.stderr.read().decode(errors='replace').strip()[:300]}")
            if time.monotonic() > deadline:
                raise FsbmError(f"rpcbind did not listen on port {RPCBIND_PORT} within {START_TIMEOUT_S:.0f} s")
            time.sleep(0.05)
        yield
    finally:
        _stop(process)


def _last_lines(log: Path, count: int = 5) -> str:
    with suppress(OSError):
        lines = [line for line in log.read_text(errors="replace").splitlines() if "DBUS" not in line]
        return "\n".join(lines[-count:])
    return "(no log)"


@contextmanager
def serving(exports: list[Path], home: Path) -> Iterator[NfsServer]:
    """An NFS server exporting `exports` (existing directories, each served at its own path)
    until the block ends; its configuration, log and state in `home`.  Refuses where the
    tools are missing or another server holds port 2049."""
    if missing := missing_tools():
        raise FsbmError(f"serving NFS needs {', '.join(missing)}", hint="`make deps` installs them")
    exported = tuple(Path(e).resolve() for e in exports)
    for export in exported:
        if not export.is_dir():
            raise FsbmError(f"cannot export {export}: not a directory")
    if _listening(NFS_PORT):
        raise FsbmError(f"port {NFS_PORT} is taken: another NFS server runs here; stop it first")
    home.mkdir(parents=True, exist_ok=True)
    (home / "recovery").mkdir(exist_ok=True)
    config, log = home / "ganesha.conf", home / "ganesha.log"
    config.write_text(_configuration(exported, home))
    log.write_text("")
    with _rpcbind():
        process = subprocess.Popen(["ganesha.nfsd", "-F", "-f", str(config), "-L", str(log), "-p",
                                    str(home / "ganesha.pid"), "-N", "NIV_EVENT"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not (READY_LINE in log.read_text(errors="replace") and _listening(NFS_PORT)):
                if process.poll() is not None:
                    raise FsbmError(f"the NFS server exited ({process.returncode}) while starting:\n{_last_lines(log)}")
                if time.monotonic() > deadline:
                    raise FsbmError(f"the NFS server did not start within {START_TIMEOUT_S:.0f} s:\n{_last_lines(log)}")
                time.sleep(0.05)
            yield NfsServer(exported, log)
        finally:
            _stop(process)


# The kernel's capture buffer: a client writing a large file on the loopback sends 64 KiB
# segments faster than tshark writes them out, and the default 2 MiB buffer drops some.
CAPTURE_BUFFER_MIB = 512
PROBE_EVERY_S = 0.02


@dataclass
class Capture:
    """A capture being made into `path`; once it is stopped, how many packets it dropped
    (None where tshark did not say)."""

    path: Path
    dropped: int | None = None


def _probe() -> bytes:
    """A connection to the server's port and its close: packets the capture filter takes, and
    the NFS parser leaves (no RPC in them).  Its mark: the ports of its TCP header, as the
    capture holds them."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.1)
        probe.connect_ex((HOST, NFS_PORT))
        return struct.pack("!HH", probe.getsockname()[1], NFS_PORT)


def _wait_for_probes(process: subprocess.Popen, path: Path, since: int, why: str) -> None:
    """Probes (_probe) until the capture file holds one of them past byte `since`.

    tshark says it is capturing before dumpcap has opened the interface, and dumpcap takes
    packets from the kernel a block at a time, a block once it is full or a while old: a
    probe in the file past `since` means that every packet before it is there too."""
    deadline = time.monotonic() + START_TIMEOUT_S
    marks: list[bytes] = []
    while True:
        marks.append(_probe())
        time.sleep(PROBE_EVERY_S)
        if path.exists():
            with path.open("rb") as f:
                f.seek(since)
                written = f.read()
            if any(mark in written for mark in marks):
                return
        if process.poll() is not None:
            raise FsbmError(f"tshark exited ({process.returncode}) {why}")
        if time.monotonic() > deadline:
            raise FsbmError(f"tshark captured nothing on the loopback within {START_TIMEOUT_S:.0f} s {why}")


@contextmanager
def capturing(path: Path) -> Iterator[Capture]:
    """tshark capturing the server's traffic on the loopback (TCP port 2049) into `path`
    (pcapng) for the length of the block: capturing before it begins, and stopped only once
    everything the block sent is in the file (_wait_for_probes), saying how many packets the
    kernel dropped."""
    if shutil.which("tshark") is None:
        raise FsbmError("capturing NFS traffic needs tshark", hint="`make deps` installs it")
    path.unlink(missing_ok=True)
    process = subprocess.Popen(["tshark", "-i", "lo", "-f", f"tcp port {NFS_PORT}", "-B", str(CAPTURE_BUFFER_MIB),
                                "-w", str(path), "-q"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    capture = Capture(path)
    try:
        _wait_for_probes(process, path, 0, "before capturing on the loopback")
        yield capture
        _wait_for_probes(process, path, path.stat().st_size, "after the block's last packets")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            _, said = process.communicate(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            _, said = process.communicate()
        if found := re.search(r"(\d+) packets? dropped", said or ""):
            capture.dropped = int(found.group(1))
        elif "captured" in (said or ""):
            capture.dropped = 0

"""Running the system programs fsbm drives (mkfs, mount, losetup) with errors that explain."""

from __future__ import annotations

import shutil
import subprocess

from fsbm.errors import ExternalToolError, FsbmError


def require_program(name: str, package: str) -> str:
    """Path of `name`, or an error naming the Debian package that provides it."""
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/bin:/bin")
    if not path:
        raise FsbmError(f"{name} is not installed", hint=f"apt-get install {package} (make demo installs it)")
    return path


def run(command: list[str], *, timeout: float = 300) -> str:
    """Run a command to completion; its stdout, or ExternalToolError carrying its stderr."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise FsbmError(f"{' '.join(command)} did not finish within {timeout:.0f} s") from exc
    except OSError as exc:
        raise FsbmError(f"cannot run {command[0]}: {exc.strerror}") from exc
    if done.returncode != 0:
        raise ExternalToolError(command, done.returncode, done.stderr or done.stdout)
    return done.stdout

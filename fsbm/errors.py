"""Exception types a caller can catch; the command line turns them into one clear line.

Every message says what was wrong and where (file, line, device), so the CLI never
needs to show a traceback for bad input.
"""

from __future__ import annotations

import signal


class FsbmError(Exception):
    """A failure the user can act on.  ``exit_code`` is what the CLI exits with."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(FsbmError):
    """Bad arguments or input: exit code 2, like fsbench and every POSIX tool."""

    exit_code = 2


class Interrupted(FsbmError):
    """Work the user stopped (Ctrl-C, SIGTERM) part-way: exit code 128 + the signal, as a
    shell reports it (130 for Ctrl-C, 143 for SIGTERM); the message says what ran and what
    of it was kept."""

    @property  # type: ignore[override]
    def exit_code(self) -> int:
        return 128 + (_terminated_by or signal.SIGINT)


class ExternalToolError(FsbmError):
    """A program fsbm drives (mkfs, mount, losetup, fsbench) failed; its stderr is kept."""

    def __init__(self, command: list[str], returncode: int, stderr: str) -> None:
        shown = " ".join(command)
        detail = stderr.strip().splitlines()
        tail = "; ".join(detail[-3:]) if detail else "no message"
        super().__init__(f"{shown} failed (exit {returncode}): {tail}")
        self.command = command
        self.returncode = returncode
        self.stderr = stderr


class Terminated(BaseException):
    """SIGTERM, raised as an exception so the same unwinding runs as for Ctrl-C.

    A BaseException, like KeyboardInterrupt, so no `except Exception` swallows it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by signal {signum}")
        self.signum = signum


# The signal raise_terminated last turned into Terminated; None for none (Ctrl-C is
# Python's own KeyboardInterrupt).  Work that catches Terminated to keep partial results
# raises Interrupted later, and this says which signal it was.
_terminated_by: int | None = None


def raise_terminated(signum: int, frame: object) -> None:
    """A signal handler: SIGTERM becomes Terminated."""
    global _terminated_by
    _terminated_by = signum
    raise Terminated(signum)

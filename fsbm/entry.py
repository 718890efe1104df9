"""The `fsbm` command's entry point.

Loading the command line takes a second or more (pandas, pyarrow, FastAPI): an interrupt in
that time is the user's Ctrl-C like any other, answered with one line and exit code 130,
not a traceback, and a SIGTERM one line and 143.  Once loaded, api/cli.py's own main says what happened; once the command
has finished, a late interrupt is ignored.
"""

from __future__ import annotations

import signal
import sys


def _terminated_while_loading(signum: int, frame: object) -> None:
    sys.stderr.write("fsbm: terminated\n")
    sys.exit(128 + signum)


def main() -> None:
    # SIGTERM while loading ends the command as the loaded one's handler would: nothing has
    # begun that needs undoing, and the exit code says which signal (not a death by it).
    signal.signal(signal.SIGTERM, _terminated_while_loading)
    try:
        from fsbm.api.cli import main as run_command_line

        run_command_line()
    except KeyboardInterrupt:  # while loading, or between the load and the command's own handler
        sys.stderr.write("fsbm: interrupted\n")
        sys.exit(130)
    finally:
        # The command has finished, one way or another: an interrupt now, while the
        # interpreter shuts down, must not turn its exit code into a death by signal.
        signal.signal(signal.SIGINT, signal.SIG_IGN)

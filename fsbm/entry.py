"""The `fsbm` command's entry point.

Loading the command line takes a second or more (pandas, pyarrow, FastAPI): an interrupt in
that time is the user's Ctrl-C like any other, answered with one line and exit code 130,
not a traceback.  Once loaded, api/cli.py's own main says what happened; once the command
has finished, a late interrupt is ignored.
"""

from __future__ import annotations

import signal
import sys


def main() -> None:
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

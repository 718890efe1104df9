"""The `fsbm` command's entry point.

Loading the command line takes a second or more (pandas, pyarrow, FastAPI): an interrupt in
that time is the user's Ctrl-C like any other, answered with one line and exit code 130,
not a traceback.  Once loaded, api/cli.py's own main says what happened.
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from fsbm.api.cli import main as run_command_line
    except KeyboardInterrupt:
        sys.stderr.write("fsbm: interrupted\n")
        sys.exit(130)
    run_command_line()

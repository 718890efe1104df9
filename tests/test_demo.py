"""`make demo`'s embedded workload: a real untar + grep + rm, recorded, parsed, characterized."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from rich.console import Console

from fsbm.api.cli import Settings
from fsbm.api.demo import _workload


def test_the_demo_workload_is_traced_and_characterized_with_the_trees_counts(fsbm_home: Path) -> None:
    console = Console(record=True, width=120)
    _workload(Settings(None, None), console)
    text = console.export_text()
    assert "read calls" in text and "reads sequential / random" in text
    rows = sqlite3.connect(fsbm_home / "fsbm.sqlite").execute(
        "SELECT body FROM documents WHERE kind = 'profile'").fetchall()
    profile = json.loads(rows[0][0])
    ops = {name: entry["count"] for name, entry in profile["operations"].items()}
    # 400 files in 17 module directories of 5 parts each (17 and 5 coprime: 85 parts) under src/
    directories = 1 + 17 + 85
    assert ops["unlink"] == 400 and ops["rmdir"] == directories and ops["mkdir"] == directories
    assert profile["original_calls"]["unlinkat"]["count"] == 400 + directories  # rm -rf uses unlinkat for both
    # tar's 400 creates, and the shell's "> /dev/null" (O_CREAT on a file that exists: see the note)
    assert ops["create"] == 401

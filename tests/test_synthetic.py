"""Tang's workload generator: a profile exported as a synthetic workload, replayed for real
by fsreplay under strace, characterized again: every percentage of Tang's table comes back
within 5% (relative; half a point for shares under 10%)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

from fsbm.characterizer import Profile, characterize, characterize_file
from fsbm.characterizer.synthetic import synthesize
from fsbm.microbench.replay import fsreplay_binary
from fsbm.traces.ingest import ingest, read_events
from fsbm.traces.record import record
from fsbm.traces.replay_plan import write_plan
from tests.conftest import SHARED_DATA, run_fsbm

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared


def replayed_profile(table: pa.Table, tmp_path: Path) -> tuple[Profile, dict]:
    """Replay an event table under strace; the profile of the replay's own calls on the target."""
    write_plan(table, tmp_path / "plan")
    target = tmp_path / "target"
    target.mkdir()
    replay = [str(fsreplay_binary()), "--plan", str(tmp_path / "plan"), "--target", str(target)]
    subprocess.run([*replay, "--tree-only"], check=True, capture_output=True)  # untraced
    recording = record([*replay, "--skip-tree", "--output", str(tmp_path / "replay.json")], tmp_path / "r.strace")
    assert recording.returncode == 0
    ingest([recording.log], tmp_path / "r.parquet")
    events = read_events(tmp_path / "r.parquet")
    inside = pa.array([str(f).startswith(f"{target}/") for f in events["file"].to_pylist()])
    return characterize(events.filter(inside)), json.loads((tmp_path / "replay.json").read_text())


def assert_same_percentages(original: Profile, again: Profile) -> None:
    for key, value in original.tang.items():
        if key.endswith("_pct"):
            allowed = 0.05 * value if value >= 10 else 0.5
            assert abs(again.tang[key] - value) <= allowed, (key, value, again.tang[key])


def test_a_shared_logs_profile_comes_back_from_its_synthetic_replay(tmp_path: Path) -> None:
    ingest([SHARED_DATA / "strace" / "cmatthew_gcc.txt"], tmp_path / "gcc.parquet", keep_going=True)
    original = characterize_file(tmp_path / "gcc.parquet")
    table = synthesize(original, events=20_000)
    # The workload has the profile's mix before it runs...
    assert_same_percentages(original, characterize(table))
    again, replay = replayed_profile(table, tmp_path)
    # ...and after: every call ran as planned, and its trace has the same shares.
    assert replay["mismatches"] == [] and replay["operations_run"] == table.num_rows
    assert again.tang["calls"] == pytest.approx(table.num_rows, rel=0.01)
    assert_same_percentages(original, again)


def test_the_command_line_exports_a_synthetic_workload_that_replays(traced: Path, tmp_path: Path,
                                                                    fsbm_home: Path) -> None:
    synthetic = tmp_path / "synthetic.parquet"
    done = run_fsbm("characterize", str(traced), "--synthetic", str(synthetic), "--synthetic-events", "5000",
                    "--json", str(tmp_path / "p.json"))
    assert done.returncode == 0, done.stderr
    original = Profile.load(tmp_path / "p.json")
    again, replay = replayed_profile(read_events(synthetic), tmp_path)
    assert replay["mismatches"] == []
    assert_same_percentages(original, again)
    target = tmp_path / "cli-target"
    target.mkdir()
    done = run_fsbm("replay", str(synthetic), "--target", str(target), "--mode", "threads")
    assert done.returncode == 0, done.stderr

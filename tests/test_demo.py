"""`make demo`, end to end on two candidates: provisioned, measured, a real program recorded,
characterized, predicted, run and replayed, the verdict printed and the report written; a
second run measures again only a cost table too old to judge today's runs by."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fsbm.api.provision import hours_since, stale_table_notes
from fsbm.store import ResultsStore
from tests.conftest import QUICK_TABLE_EFFORT, QUICK_TABLE_FLAGS, quick_table_efforts, require_root, run_fsbm

pytestmark = pytest.mark.cores_shared  # asserts nothing on a time it measures


@pytest.mark.slow(seconds=80)
def test_the_demo_runs_the_whole_job_and_a_second_run_reuses_the_stores_recent_tables(fsbm_home: Path) -> None:
    require_root()
    try:
        first = run_fsbm("demo", "--candidates", "ext4,tmpfs", "--rounds", "2", "--size", "768M", *QUICK_TABLE_FLAGS)
        assert first.returncode == 0, first.stderr
        for step in ("1. candidates", "2. recording the workload on demo-ext4", "3. predicting",
                     "4. measuring: 2 shuffled cold rounds", "5. verdict and report"):
            assert step in first.stdout
        assert "predicted against measured" in first.stdout and "verdict: demo-ext4" in first.stdout
        assert "demo-tmpfs keeps nothing across a reboot" in " ".join(first.stdout.split())  # a wrapped caption
        judged = " ".join(first.stdout.split("judged: ")[1].split())
        assert "runtimes: median error" in judged and "ratios to demo-ext4: median error" in judged
        assert "real runs inside their 90% interval" in judged and "ranked right" in judged
        db = sqlite3.connect(fsbm_home / "fsbm.sqlite")
        store = ResultsStore(fsbm_home / "fsbm.sqlite")  # bodies as the store keeps them (compressed)
        [(prediction_id, _, prediction)] = store.documents("prediction")
        assert {c["candidate"] for c in prediction["candidates"]} == {"demo-ext4", "demo-tmpfs"}
        # Recorded with its calls' CPU measured by replay on the ext4, which sets the CPU scales.
        assert set(prediction["cpu_scales"]) == {"metadata", "read", "write", "sync"}
        assert any(k != 1.0 for k in prediction["cpu_scales"].values())
        observations = [body for _, _, body in store.documents("observation", name=str(prediction_id))]
        assert {(o["candidate"], o["kind"]) for o in observations} == {
            (c, k) for c in ("demo-ext4", "demo-tmpfs") for k in ("real run", "replay")}
        assert all(len(o["seconds"]) == 2 and min(o["seconds"]) > 0 for o in observations)
        report = fsbm_home / "reports" / f"prediction-{prediction_id}.html"
        assert "Predicted against measured" in report.read_text()
        # Each table measured, then grown by the program's own cases (its mixes of file sizes, of
        # write sizes, as tar's writes straddle pages, and of both for its writes into new files).
        told_first = " ".join(first.stdout.split())
        assert "demo-ext4: 6 of the program's own cases measured" in told_first
        assert "demo-tmpfs: 4 of the program's own cases measured" in told_first
        tables = db.execute("SELECT COUNT(*) FROM documents WHERE kind = 'cost_table'").fetchone()[0]
        assert tables == 4
        [(_, _, grown), *_] = store.documents("cost_table", name="demo-ext4")
        mixes = {(e["bench"], e["cache"]) for e in grown["entries"] if e.get("file_sizes")}
        assert mixes == {(b, c) for b in ("create_written_mix", "unlink_written_mix") for c in ("cold", "warm")} | {
            ("append_mix", "warm"), ("write_new_mix", "warm")}

        # The tmpfs's table, as though measured in January: too old for the demo to judge
        # today's runs by, so that one is measured again (and grown again) and the ext4's,
        # which holds the program's cases already, is reused as it is.
        [(_, _, tmpfs_table), *_] = store.documents("cost_table", name="demo-tmpfs")
        store.save_document("cost_table", {**tmpfs_table, "measured_at": "2026-01-01T00:00:00Z"}, name="demo-tmpfs")
        second = run_fsbm("demo", "--candidates", "ext4,tmpfs", "--rounds", "1", "--size", "768M", *QUICK_TABLE_FLAGS)
        assert second.returncode == 0, second.stderr
        told = " ".join(second.stdout.split())
        assert told.count("from the store") == 1 and "creating" not in told
        assert "demo-tmpfs: cost table" in told and "h ago, more than 6 h: measuring it again" in told
        # tmpfs has no cold cases: its three warm ones are measured.
        predicting = told.split("3. predicting")[1].split("4. measuring")[0]
        assert "demo-tmpfs: 4 of the program's own cases measured" in predicting, predicting
        assert "demo-ext4: " not in predicting, predicting
        # The aged copy, the new measurement and its growth by the program's cases.
        assert db.execute("SELECT COUNT(*) FROM documents WHERE kind = 'cost_table'").fetchone()[0] == tables + 3
        # Every table at the effort asked for (--table-reps, --table-case-seconds).
        assert quick_table_efforts(fsbm_home) == {QUICK_TABLE_EFFORT}
    finally:
        run_fsbm("fs", "destroy", "demo-ext4", "demo-tmpfs")


def test_a_prediction_names_its_cost_tables_measured_long_ago() -> None:
    now = datetime(2026, 11, 28, 12, 0, tzinfo=timezone.utc)
    notes = stale_table_notes([("ext4", "2026-11-28T06:00:00Z"), ("xfs", "2026-11-27T06:00:00Z"),
                               ("btrfs", "2026-11-01T12:00:00+00:00"), ("old", None), ("bad", "yesterday")], now, 24)
    assert [n.split("'")[1] for n in notes] == ["xfs", "btrfs"]
    assert "measured 30 hours ago" in notes[0] and "measured 27 days ago" in notes[1]
    assert hours_since("2026-11-28T11:30:00", now) == 0.5  # no zone: the tables' UTC


def test_the_demo_judges_ratios_against_same_round_ratios_as_the_validations_do() -> None:
    from fsbm.api.demo import PROGRAM, verdict_summary
    from fsbm.documents import CandidatePrediction, Prediction

    # Three rounds, the device slower in the second: ext4 1.0, 3.0, 2.0 s; xfs 1.3, 3.3, 2.1 s.
    # The same-round ratios are 1.3, 1.1 and 1.05 (median 1.1); the medians' ratio, 2.1 / 2.0,
    # is 1.05.  A prediction of xfs at 1.1x ext4 is right by the same-round ratio.
    records = [{"round": r, "program": PROGRAM.name, "target": target, "kind": "real", "seconds": seconds}
               for target, runs in (("ext4", [1.0, 3.0, 2.0]), ("xfs", [1.3, 3.3, 2.1]))
               for r, seconds in enumerate(runs)]
    candidates = [CandidatePrediction.model_construct(candidate=name, runtime_s=runtime, low_s=0.0, high_s=10.0)
                  for name, runtime in (("ext4", 2.0), ("xfs", 2.2))]
    judged = verdict_summary(Prediction.model_construct(candidates=candidates), records, "ext4")
    assert "ratios to ext4: median error 0%, largest 0%" in judged, judged
    assert "2 of 2 real runs inside" in judged


def test_the_demo_says_which_operation_a_filesystem_part_misses_in() -> None:
    from fsbm.api.demo import PROGRAM, filesystem_misses
    from fsbm.documents import CandidatePrediction, PriceLine, Prediction

    def line(op: str, ms: float) -> PriceLine:
        return PriceLine(op=op, group="metadata", detail="", count=1, ns_each=ms * 1e6, total_ns=ms * 1e6, source="t")

    # xfs: modelled 60 ms against replays of 40-50 ms (median 45: +33%), its unlinks 20 ms over;
    # ext4: 41 ms against 40 ms, within the replays' spread, so not broken down.
    replays = {"xfs": [({"unlink": 10e6, "open": 20e6, "read": 15e6}, 0.045), ({"unlink": 9e6}, 0.040),
                       ({"unlink": 11e6}, 0.050)],
               "ext4": [({"read": 40e6}, 0.040)]}
    records = [{"round": r, "program": PROGRAM.name, "target": target, "kind": "replay", "seconds": seconds,
                "ops_ns": ops} for target, runs in replays.items() for r, (ops, seconds) in enumerate(runs)]
    candidates = [CandidatePrediction.model_construct(candidate="xfs", fs_s=0.060,
                                                      lines=[line("unlink", 30), line("create", 18), line("read", 12)]),
                  CandidatePrediction.model_construct(candidate="ext4", fs_s=0.041, lines=[line("read", 41)])]
    said = filesystem_misses(Prediction.model_construct(candidates=candidates), records)
    assert len(said) == 1, said
    assert said[0].startswith("xfs: filesystem part +33% against its replays; the operation furthest off, unlink"), said
    assert "modelled 30 ms, replayed 10 ms" in said[0], said

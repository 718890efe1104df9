"""`fsbm validate` end to end: its rounds and cost tables, and a real validation of three
programs on ext4 and tmpfs measured, judged, calibrated and kept in the store."""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter
from pathlib import Path

import pytest

from fsbm.predictor.cost_table import CostTable
from fsbm.predictor.estimator import RuntimeEstimator
from fsbm.predictor.judge import (CPU_BEFORE, CPU_IN_ROUNDS, CPU_IN_ROUNDS_BRACKETED, CPU_IN_ROUNDS_PRICED,
                                  CPU_IN_ROUNDS_WARM, _adopted_form, features, judge)
from fsbm.predictor.model import price_workload
from fsbm.predictor.pricing import Pricer
from fsbm.store import ResultsStore
from fsbm.traces.outside_files import bounded_wait_ns
from fsbm.traces.record import median_cpu
from tests.conftest import QUICK_TABLE_EFFORT, QUICK_TABLE_FLAGS, quick_table_efforts, run_fsbm


def test_cost_tables_are_measured_spread_over_the_rounds() -> None:
    """validate measures each target's table `--table-repeats` times, from before the first
    round to after the last, so the tables see the disk the rounds saw."""
    from fsbm.predictor.validate import table_boundaries

    assert table_boundaries(5, 1) == [0]
    assert table_boundaries(5, 2) == [0, 5]
    assert table_boundaries(5, 3) == [0, 2, 5]
    assert table_boundaries(2, 5) == [0, 1, 2]  # never more often than between rounds


def test_the_doc_shows_how_each_tables_read_and_sync_moved_between_its_measurements() -> None:
    """A sync's cost followed the device from hour to hour (sqlite's largest misses), so the
    doc gives each measurement's 4 KiB fsync beside its cold read, in the order measured,
    and says so beside the verdict where either moved by half again or more."""
    from fsbm.api.validation import _cost_tables_section, _unsteady_section

    def table(at: str, read_us: float, sync_us: float) -> dict:
        entries = [{"bench": "read", "size": 4096, "order": "random", "cache": "cold",
                    "latency_ns": {"mean": read_us * 1e3}},
                   {"bench": "fsync", "size": 4096, "order": "sequential", "cache": "warm",
                    "latency_ns": {"mean": sync_us * 1e3}}]
        return {"measured_at": at, "entries": entries}

    doc = {"targets": [{"candidate": "val-ext4", "label": "ext4 fresh"}],
           "cost_table_runs": {"val-ext4": [table("2026-11-24T09:04:00", 116, 864),
                                            table("2026-11-24T09:25:00", 125, 2940)]}}
    rows = [line for line in _cost_tables_section(doc) if line.startswith("| ext4 fresh")]
    assert rows == ["| ext4 fresh | 2 | 09:04-09:25 UTC | 3.40x | 116, 125 | 864, 2940 |"]
    # A drift case that moved by 1.5x or more is called out beside the verdict; one that
    # moved less (the read, 1.08x) is not.
    (warning,) = [line for line in _unsteady_section(doc) if line]
    assert "ext4 fresh's 4 KiB fsync 864-2940 us (3.4x)" in warning and "random read" not in warning
    doc["cost_table_runs"]["val-ext4"][1] = table("2026-11-24T09:25:00", 125, 1200)
    assert _unsteady_section(doc) == []
    # Nor does a case with no device under it (tmpfs's fsync: 0.2 us, then 0.3).
    doc["cost_table_runs"]["val-ext4"] = [table("2026-11-24T09:04:00", 116, 0.2), table("2026-11-24T09:25:00", 125, 0.3)]
    assert _unsteady_section(doc) == []


def test_a_round_runs_each_program_on_every_target_back_to_back_in_a_shuffled_order() -> None:
    """Ratios between targets are judged within a round, so a program's runs on the targets
    are kept together (blocked by program), and both the blocks and the runs within them
    are shuffled from round to round."""
    import random

    from fsbm.predictor.suite import programs as suite
    from fsbm.predictor.validate import Target, round_order

    programs = suite()
    targets = [Target(f"fs{i}", f"fs{i}", Path(f"/mnt/{i}"), "fresh") for i in range(4)]
    # A short program records several times a round (validate.recordings_per_round), the others once.
    recordings = {p.name: 3 if p.name == "grep" else 1 for p in programs}
    rng = random.Random(1)
    rounds = [round_order(programs, targets, recordings, rng) for _ in range(6)]
    for order in rounds:
        assert len(order) == len(programs) * (len(targets) + 1) + 2
        names = [program.name for program, _ in order]
        blocks = [names[i] for i in range(len(names)) if i == 0 or names[i] != names[i - 1]]
        assert sorted(blocks) == sorted(p.name for p in programs)  # each program's runs in one block
        for program in programs:
            runs = [target for p, target in order if p is program]
            assert runs.count(None) == recordings[program.name]
            assert sorted(t.label for t in runs if t) == [t.label for t in targets]
    assert len({tuple(dict.fromkeys(p.name for p, _ in order)) for order in rounds}) > 1
    assert len({tuple(t.label if t else "" for _, t in order) for order in rounds}) > 1
    assert round_order(programs, targets, {}, rng).count((programs[0], None)) == 0  # no recordings asked


# Asserts what was run and judged, and of the times only what no second test on the other core
# can move: an fsync-bound program on memory faster than on a disk by 15%, CPU scales within 2x.
@pytest.mark.slow(seconds=100)
@pytest.mark.cores_shared
def test_validate_measures_programs_judges_them_and_calibrates(tmp_path: Path, fsbm_home: Path) -> None:
    from tests.conftest import require_root

    require_root()
    doc = tmp_path / "validation.md"
    done = run_fsbm("validate", "--candidates", "ext4,tmpfs", "--states", "fresh", "--rounds", "2", "--scale", "0.1",
                    "--only", "untar,sqlite,grep", "--table-repeats", "1", "--doc", str(doc),
                    "--json", str(tmp_path / "m.json"), *QUICK_TABLE_FLAGS, timeout=900)
    try:
        assert done.returncode == 0, done.stderr
        text = doc.read_text()
        assert "leave-one-program-out" in text and "| sqlite | tmpfs fresh |" in text
        measured = json.loads((tmp_path / "m.json").read_text())
        assert {r["kind"] for r in measured["records"]} == {"real", "replay", "recording"}
        # Each table grown by the programs' own cases, as `fsbm bench --for` would (maybe none at this scale).
        assert set(measured["workload_cases"]) <= {"val-ext4", "val-tmpfs"}
        # rounds x programs x targets x (real, replay), and each round's recording runs on the
        # traced filesystem: three of a program whose untraced cold run took under 0.2 s, else one.
        from fsbm.predictor.validate import SHORT_RUN_NS, SHORT_RUN_RECORDINGS
        per_round = {p["name"]: SHORT_RUN_RECORDINGS if p["profile"]["recording"]["untraced_wall_ns"] < SHORT_RUN_NS
                     else 1 for p in measured["programs"]}
        recordings = [r for r in measured["records"] if r["kind"] == "recording"]
        assert Counter(r["program"] for r in recordings) == {name: 2 * n for name, n in per_round.items()}
        assert len(measured["records"]) == 2 * 3 * 2 * 2 + len(recordings)
        assert {r["target"] for r in recordings} == {"ext4 fresh"}
        assert all(r["user_cpu_ns"] + r["system_cpu_ns"] > 0 and r["wall_ns"] > 0 for r in recordings)
        # A pair's difference of idle times (wall less CPU time), the walls' kept beside it; the
        # all-warm run's idle time and CPU time.  They are held to what the pair's own runs
        # allow, not to another run's wall (a host stall in one run of a pair outgrew that by
        # 50 ms in CI): the all-warm run's wall is its idle plus its CPU time, the other's that
        # plus the walls' difference, and a run's idle time lies between its wall and minus its
        # wall on each core but one (its CPU time at most its wall on every core).
        cores = os.cpu_count() or 1
        for r in recordings:
            warm_wall = r["warm_idle_ns"] + r["warm_user_cpu_ns"] + r["warm_system_cpu_ns"]
            cold_wall = warm_wall + r["outside_wall_difference_ns"]
            cold_idle = r["outside_wait_ns"] + r["warm_idle_ns"]
            assert warm_wall > 0 and cold_wall > 0 and 0 < r["warm_idle_ns"]
            assert -(cores - 1) * cold_wall <= cold_idle <= cold_wall
        assert all(0 < r["outside_read_ns"] and 0 < r["warm_user_cpu_ns"] + r["warm_system_cpu_ns"] for r in recordings)
        # Every replay says the CPU time its calls took; every real run its process tree's; each
        # recording run's measuring replay the CPU time of its calls by group.
        replays = [r for r in measured["records"] if r["kind"] == "replay"]
        # (A replay of a millisecond on tmpfs is all CPU, and the scheduler's CPU clock and the
        # wall clock part by tens of microseconds over it.  The CPU time is the workers' own:
        # with the progress thread's, a 1.1 ms replay once told 1.4 ms of it.)
        assert all(0 < r["calls_cpu_s"] < r["seconds"] * 1.05 + 200e-6 for r in replays), [
            (r["program"], r["target"], r["calls_cpu_s"], r["seconds"]) for r in replays]
        # Every replay, timed or measuring, ran each call as traced, and the doc says so.
        assert all(r["mismatches"] == 0 for r in replays) and all(r["calls_cpu_mismatches"] == 0 for r in recordings)
        assert f"Timed replays with calls that ended otherwise than traced: 0 of {len(replays)}." in text
        assert all(r["user_cpu_s"] + r["system_cpu_s"] > 0 for r in measured["records"] if r["kind"] == "real")
        groups = ("metadata", "read", "write", "sync")
        assert all(r[f"calls_cpu_{g}_ns"] >= 0 for r in recordings for g in groups)
        # ... scaled to add up to the calls' CPU of a replay without the brackets, each's count kept.
        assert all(abs(sum(r[f"calls_cpu_{g}_ns"] for g in groups) - r["calls_cpu_unbracketed_ns"]) <= len(groups)
                   and r["calls_cpu_bracketed_ns"] > 0 for r in recordings)
        assert "calls' CPU, bracketed / unbracketed (median ms over the rounds" in text
        # The recording before the rounds measured its calls' CPU too (--replay-in), as its profile keeps it.
        assert all(f"untraced_calls_cpu_{g}_ns" in p["profile"]["recording"] for p in measured["programs"] for g in groups)
        # Each round's recording also ran cold with the syncs skipped, and its measuring replay skipped them.
        assert all(r["calls_cpu_syncs_skipped"] is True for r in recordings)
        assert all(r["nosync_user_cpu_ns"] + r["nosync_system_cpu_ns"] > 0 for r in recordings)
        # Each target's cost table measured (once here: a quick fsbench of a disk filesystem is
        # a minute, and where repeated tables go is test_cost_tables_are_measured_spread_over_
        # the_rounds), judged as the per-case median of its measurements, and kept in the store.
        assert {name: len(runs) for name, runs in measured["cost_table_runs"].items()} == {"val-ext4": 1, "val-tmpfs": 1}
        # ... at the effort asked for (--table-reps, --table-case-seconds), which the measurements keep.
        assert measured["options"]["table_effort"] == dict(zip(("reps", "case_seconds"), QUICK_TABLE_EFFORT))
        assert quick_table_efforts(fsbm_home) == {QUICK_TABLE_EFFORT}
        judged_table = CostTable.from_json(measured["cost_tables"]["val-ext4"])
        assert judged_table.entry("read", "random", "cold", 4096).repeats.count == 1
        with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
            (_, _, result), = store.documents("validation")
            # Part of the set (--only): judged, but neither its model nor its figures replace the
            # whole set's, and its measurements are kept apart from those the overview reads.
            assert store.document_names("runtime_model") == [] and store.document_names("track_record") == []
            assert [name for _, name, _ in store.document_names("validation_measurements")] == ["dev, part"]
            assert len(store.documents("cost_table", name="val-ext4")) == 1
        assert "part of the set (--only)" in done.stdout
        # The verdict starts from the CPU time measured in the rounds; the recording's is judged beside it.
        assert result["summary"]["cpu"] == "in the rounds"
        assert set(result["summary"]["variants"]) == {CPU_IN_ROUNDS, CPU_IN_ROUNDS_BRACKETED, CPU_IN_ROUNDS_PRICED,
                                                      CPU_IN_ROUNDS_WARM, CPU_BEFORE}
        # The verdict scales fsbench's CPU prices of each group on every target by the calls'
        # CPU those replays measured (median over the rounds); priced, they are fsbench's.
        verdict = features(measured, 1 << 30, CPU_IN_ROUNDS)
        sqlite_rows = verdict[verdict["program"] == "sqlite"]
        scales = sqlite_rows["cpu_scales"].iloc[0]
        assert all(s == scales for s in sqlite_rows["cpu_scales"]) and set(scales) == set(groups)
        assert all(0.5 <= scales[g] <= 2.0 for g in ("metadata", "read", "write")) and scales["sync"] >= 0
        priced = features(measured, 1 << 30, CPU_IN_ROUNDS_PRICED)
        assert all(set(s.values()) == {1.0} for s in priced["cpu_scales"])
        # Its time outside is the CPU time of the rounds' runs without syncs less its calls' so
        # priced (none of them syncs), where the measurement was taken whole (no group's scale
        # at a bound); the syncs' scale is what skipping them saved the cold runs.
        sqlite_runs = [r for r in recordings if r["program"] == "sqlite"]
        whole = sum(median_cpu(sqlite_runs, "nosync_user_cpu_ns", "nosync_system_cpu_ns"))  # the median run's
        measured_calls = sum(statistics.median(r[f"calls_cpu_{g}_ns"] for r in sqlite_runs) for g in groups[:3])
        saved = sum(median_cpu(sqlite_runs, "user_cpu_ns", "system_cpu_ns")) - whole
        sqlite_profile = next(p["profile"] for p in measured["programs"] if p["name"] == "sqlite")
        traced_syncs = price_workload(sqlite_profile, Pricer(judged_table), cache_bytes=1 << 30).by_group(cpu=True)["sync"]
        assert scales["sync"] == pytest.approx(max(saved, 0) / traced_syncs, rel=1e-3, abs=1e-9)
        if all(0.5 < scales[g] < 2.0 for g in groups[:3]):
            outside_cpu = sqlite_rows["user_cpu_s"].iloc[0] + sqlite_rows["system_cpu_s"].iloc[0]
            assert outside_cpu == pytest.approx(max(whole - measured_calls, 0) / 1e9, abs=1e-5)
        assert "| before the rounds | raw |" in text
        # The form adopted by the rule of test_a_calibrated_form_is_adopted_only_where_it_is_no_worse_anywhere.
        forms = result["summary"]["variants"]["in the rounds"]
        assert result["summary"]["adopted"] == _adopted_form(forms["raw"], forms["calibrated"])
        # The CPU time of the rounds' cold runs, as for a cold prediction (its user time whole
        # where the calls' CPU is priced); the wait, the pairs' median bounded.
        grep_runs = [r for r in recordings if r["program"] == "grep"]
        grep_user = median_cpu(grep_runs, "user_cpu_ns", "system_cpu_ns")[0] / 1e9
        assert list(priced[priced["program"] == "grep"]["user_cpu_s"]) == pytest.approx([grep_user] * 2, abs=1e-9)
        # Judged beside it: the same rounds' runs with every file read in, and the same wait.
        warm = features(measured, 1 << 30, CPU_IN_ROUNDS_WARM)
        grep_warm_user = median_cpu(grep_runs, "warm_user_cpu_ns", "warm_system_cpu_ns")[0] / 1e9
        assert list(warm[warm["program"] == "grep"]["user_cpu_s"]) == pytest.approx([grep_warm_user] * 2, abs=1e-9)
        grep_wait = bounded_wait_ns([r["outside_wait_ns"] for r in grep_runs], [r["outside_read_ns"] for r in grep_runs]) / 1e9
        assert all(r["outside_wait_s"] == pytest.approx(grep_wait, abs=1e-9) for r in result["rows"]
                   if r["program"] == "grep")
        assert list(warm[warm["program"] == "grep"]["outside_wait_s"]) == pytest.approx([grep_wait] * 2, abs=1e-9)
        rows = {(r["program"], r["candidate"]): r for r in result["rows"]}
        sqlite_ext4, sqlite_tmpfs = rows[("sqlite", "ext4 fresh")], rows[("sqlite", "tmpfs fresh")]
        # fsync-bound: memory is far faster, and the model, fitted without sqlite, says so.
        assert sqlite_tmpfs["real_s"] < sqlite_ext4["real_s"] / 1.15
        assert sqlite_tmpfs["predicted_s"] < sqlite_ext4["predicted_s"]
        # Each largest miss is split into the filesystem's part and the outside part.
        section = text.split("## Largest misses")[1].split("\n## ")[0]
        misses = [line for line in section.splitlines() if line.startswith("- ")]
        assert misses and all(". Filesystem: modelled " in line and ". Outside: predicted " in line for line in misses)
        again = run_fsbm("validate", "--from", str(tmp_path / "m.json"), "--doc", str(tmp_path / "again.md"))
        assert again.returncode == 0, again.stderr
        # A document says when its runs were measured, and when stored runs were judged again.
        assert text.splitlines()[2].startswith("Regenerated by `fsbm validate --set dev` on ")
        assert "judged again on " in (tmp_path / "again.md").read_text().splitlines()[2]
        # The same measurements as a whole development set's (as if the set were these three,
        # kept as a run of it keeps them): judged again, they store the model `fsbm predict` uses.
        whole = {**measured, "options": {**measured["options"], "only": None}}
        (tmp_path / "whole.json").write_text(json.dumps(whole))
        with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
            store.save_document("validation_measurements", whole, name="dev")
        done = run_fsbm("validate", "--from", str(tmp_path / "whole.json"), "--doc", str(tmp_path / "whole.md"))
        assert done.returncode == 0, done.stderr
        with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
            assert [name for _, name, _ in store.document_names("runtime_model")] == ["recorded"]
        # The same measurements judged as a held-out set: by the model the development set
        # stored, every program at once, and no model fitted or stored on them.
        held = {**measured, "options": {**measured["options"], "split": "test"}}
        (tmp_path / "held.json").write_text(json.dumps(held))
        with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
            models_before = store.document_names("runtime_model")
        done = run_fsbm("validate", "--from", str(tmp_path / "held.json"), "--doc", str(tmp_path / "held.md"))
        assert done.returncode == 0, done.stderr
        held_text = (tmp_path / "held.md").read_text()
        assert "# Validation of recordings: the test set" in held_text and "leave-one-program-out" not in held_text
        assert "90% intervals covering the measured runtime: absolute form | " in held_text
        with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
            assert store.document_names("runtime_model") == models_before
            stored = RuntimeEstimator.from_json(store.document(models_before[0][0], "runtime_model")[2])
        judged = judge(held, 1 << 30, model=stored)
        assert judged.summary["held_out"] and judged.model is stored
        assert judged.summary["intervals"] == len(judged.rows) and 0 <= judged.summary["covered"] <= len(judged.rows)
        # The overview judges the newest stored measurements of each validation again, side by
        # side, and says which were never measured.
        overview = run_fsbm("validate", "--overview", "--doc", str(tmp_path / "overview.md"))
        assert overview.returncode == 0, overview.stderr
        page = (tmp_path / "overview.md").read_text()
        assert "| dev | recording (`fsbm trace record`), absolute |" in page
        assert "- recordings of the test set (`fsbm validate --set test`)" in page
        assert "- plain traces of the dev set (`fsbm validate --plain --set dev`)" in page
    finally:
        for name in ("val-ext4", "val-tmpfs"):
            run_fsbm("fs", "destroy", name)



def test_a_later_table_that_fsbench_could_not_measure_leaves_the_rounds_going(tmp_path: Path) -> None:
    """A table measured between rounds that fails (here fsbench's own refusal of a target that
    does not exist; in a validation, a full image) is left out, said in the document's first
    line, and the rounds go on priced by the tables before it; before any table there is
    nothing to price by, and the error stands."""
    from rich.console import Console

    from fsbm.api.commands.common import Settings
    from fsbm.api.validation import more_tables
    from fsbm.errors import FsbmError
    from fsbm.microbench.fsbench import TableEffort
    from fsbm.pipeline import measure_costs
    from fsbm.predictor.judge import provenance
    from tests.test_predictor_model import table

    settings = Settings(tmp_path / "store.sqlite", None)

    def measure(store: ResultsStore) -> dict[str, list[CostTable]]:
        gone = tmp_path / "no-such-mount"
        return {"val-ext4": [measure_costs(gone, TableEffort().quick(aging_state="fresh", seed=2), "val-ext4",
                                           store)[1]]}

    console = Console(quiet=True)
    measured, failed = {"val-ext4": [table()]}, []
    assert more_tables(measure, settings, measured, failed, "cost tables 2 of 3", console) is None
    assert len(measured["val-ext4"]) == 1 and failed[0]["tables"] == "cost tables 2 of 3"
    assert "does not exist" in failed[0]["error"]
    doc = {"finished": 0, "machine": {"hostname": "vm", "kernel": "k"}, "cost_tables_failed": failed}
    assert "Cost tables 2 of 3 could not be measured" in provenance("fsbm validate", doc)
    with pytest.raises(FsbmError, match="does not exist"):
        more_tables(measure, settings, {"val-ext4": []}, [], "cost tables 1 of 3", console)


def test_inputs_staged_for_programs_not_run_are_released_and_nothing_else(tmp_path: Path) -> None:
    """A validation removes from each image's work directory the inputs staged for the
    programs it does not run (the other set's), and touches nothing else on the image."""
    from fsbm.predictor.validate import WORK_DIRECTORY, Target, release_staged

    work = tmp_path / WORK_DIRECTORY
    for name in ("sqlite", "rsync", "python-import", "replays"):
        (work / name).mkdir(parents=True)
        (work / name / "input.bin").write_bytes(b"x" * 100)
    (work / "notes.txt").write_text("kept")
    (tmp_path / "fsbm-validate-nfs").mkdir()
    target = Target("ext4 fresh", "val-ext4", tmp_path, "fresh")
    assert release_staged(target, {"sqlite"}) == ["python-import", "rsync"]
    assert sorted(p.name for p in work.iterdir()) == ["notes.txt", "replays", "sqlite"]  # (replays: where they run)
    assert (work / "sqlite" / "input.bin").exists() and (tmp_path / "fsbm-validate-nfs").is_dir()
    assert release_staged(Target("xfs fresh", "val-xfs", tmp_path / "none", "fresh"), {"sqlite"}) == []

"""The Python API a notebook uses (fsbm/pipeline.py): the README's example, run as written
against a real store, with the names of its trace and cost tables put in."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import fsbm
from tests.conftest import REPO, Served

pytestmark = pytest.mark.cores_shared  # asserts nothing on a time it measures


def readme_example() -> str:
    text = (REPO / "README.md").read_text()
    section = text.split("### In a notebook", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_runs(served: Served, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                 tmp_path: Path) -> None:
    ext4, tmpfs = served.candidates
    monkeypatch.setenv("FSBM_HOME", str(served.home))
    code = (readme_example().replace('"build.strace"', repr(str(served.log)))
            .replace('["ext4", "xfs"]', repr([ext4, tmpfs])).replace('cost_table("ext4")', f"cost_table({ext4!r})")
            .replace('"/mnt/scratch/empty"', repr(str(tmp_path / "replayed"))))
    (tmp_path / "replayed").mkdir()
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    events, profile, prediction, costs, replayed = (namespace[k] for k in ("events", "profile", "prediction", "costs",
                                                                            "replayed"))
    # The profile leaves out calls on devices, /proc and pipes, which the event table keeps.
    assert 100 < profile.to_json()["events"] <= len(events) and {"op", "file", "size"} <= set(events.columns)
    assert profile.to_frame().loc["read", "count"] > 0
    frame = prediction.to_frame()
    assert list(frame.index) == prediction.ranking.order and (frame["low_s"] <= frame["runtime_s"]).all()
    assert prediction.ranking.best == ext4 and prediction.ranking.references == [tmpfs]
    assert (costs["op"] == "stat").any() and (costs["mean_ns"] > 0).all()
    assert prediction.id is None  # nothing kept unless asked
    assert replayed["operations_run"] == replayed["planned_operations"] > 100 and replayed["runtime_ns"] > 0
    assert replayed["plan"]["operations"] == replayed["planned_operations"]


def test_the_pipeline_takes_a_dataframe_and_keeps_when_asked(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FSBM_HOME", str(served.home))
    events = fsbm.parse(served.log)
    work = str(Path(served.command.split()[1]))  # "cd WORK && ...": the scope it was recorded with
    profile = fsbm.characterize(events, scope=work)
    assert profile.to_json()["events"] == fsbm.characterize(served.log).to_json()["events"]
    kept = fsbm.predict(profile, [served.candidates[0]], keep=True, name="notebook")
    assert kept.id is not None and kept.profile_id is not None
    with pytest.raises(fsbm.UsageError, match="no cost table for 'zfs'"):
        fsbm.predict(profile, ["zfs"])
    with pytest.raises(fsbm.UsageError, match="does not exist"):
        fsbm.characterize(served.home / "missing.strace")


def test_the_reports_cache_sweep_meets_the_prediction_at_its_own_cache_size(served: Served,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from fsbm.api.prediction_service import PredictionService
    from fsbm.api.report import cache_sweep
    from fsbm.store import ResultsStore

    monkeypatch.setenv("FSBM_HOME", str(served.home))
    body = fsbm.characterize(served.log).to_json()
    timeline = dict(body["timeline"])
    # The same calls made by two processes at once: the sweep divides as the prediction does.
    timeline.update(lifetimes_ns=2 * timeline["span_ns"], blocked_ns=0)
    for profile in (body, {**body, "timeline": timeline}):
        prediction = fsbm.predict(profile, list(served.candidates)).model_dump()
        with ResultsStore(served.store) as store:
            sweep = cache_sweep(PredictionService(served.store), store, prediction, profile)
        for entry in prediction["candidates"]:
            at_own_size = dict(sweep[entry["candidate"]])[prediction["cache_bytes"]]
            assert at_own_size == pytest.approx(entry["runtime_s"], rel=1e-9)
    assert prediction["concurrency"] == 2.0

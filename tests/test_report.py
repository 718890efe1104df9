"""The purchase-decision report in a real browser: headless Chromium (Debian's package) opens
it, on a desktop and on a phone's viewport, and in print; no console errors, every chart
drawn with its marks, nothing wider than a phone.  Screenshots go to build/screenshots/ for a
reviewer to look at."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from fsbm.api.report import report_for_prediction
from fsbm.api.prediction_service import PredictionService
from fsbm.characterizer.characterize import characterize_files
from fsbm.microbench import cache
from fsbm.store import ResultsStore
from fsbm.traces.ingest import ingest
from tests.conftest import SERVED_FILES, REPO, Served, chromium_path

pytestmark = pytest.mark.cores_shared  # asserts nothing on a time it measures

SCREENSHOTS = REPO / "build" / "screenshots"
CHARTS = {"runtime", "breakdown", "reuse", "cache-sweep", "observed"}


@pytest.fixture
def report_file(served: Served, tmp_path: Path) -> Path:
    """The report of a real prediction (the recorded program, real cost tables), with the
    program's real cold runs on the traced ext4 as its measured side."""
    events = ingest([served.log], tmp_path / "e.parquet").output
    profile = characterize_files([events]).to_json()
    profile["source"] = f"copy, grep and delete a {SERVED_FILES}-file tree"
    seconds = []
    for _ in range(3):
        subprocess.run(["sync"], check=True)
        cache.drop_all()
        started = time.perf_counter()
        subprocess.run(["sh", "-c", served.command], check=True)
        seconds.append(time.perf_counter() - started)
    predictor = PredictionService(served.store)
    with ResultsStore(served.store) as store:
        profile_id = store.save_document("profile", profile, name=profile["source"])
        doc = predictor.predict(store, profile, list(served.candidates), profile_id=profile_id)
        predictor.save(store, doc, "report test")
        store.save_document("observation", {"candidate": served.candidates[0], "kind": "real run",
                                            "compare_with": "runtime_s", "seconds": seconds}, name=str(doc.id))
        html = report_for_prediction(predictor, store, doc.id)
    out = tmp_path / "report.html"
    out.write_text(html)
    return out


def _open(browser, path: Path, viewport: dict, media: str = "screen"):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport=viewport)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning")
            else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.emulate_media(media=media)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, problems


CHART_STATE = """() => [...document.querySelectorAll('svg.chart')].map(s => {
    const box = s.getBoundingClientRect();
    return {name: s.dataset.chart, width: box.width, height: box.height,
            marks: [...s.querySelectorAll('.mark')].filter(m => {
                const b = m.getBoundingClientRect(); return b.width > 0 || b.height > 0; }).length};
})"""


@pytest.mark.slow(seconds=45)
def test_the_report_renders_every_chart_without_console_errors(report_file: Path, served: Served) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            page, problems = _open(browser, report_file, {"width": 1280, "height": 900})
            charts = page.evaluate(CHART_STATE)
            page.screenshot(path=str(SCREENSHOTS / "report-desktop.png"), full_page=True)
            assert problems == []
            names = {c["name"] for c in charts}
            latency = {name for name in names if name.startswith("latency-")}  # one per headline case drawn
            assert names - latency == CHARTS and 1 <= len(latency) <= 4, names
            spread = page.inner_text("section:has(svg[data-chart^=latency])")
            assert spread.startswith("How the calls spread") and "p99.9" in spread
            where = page.inner_text("section:has(h2:text('Where it was measured'))")
            assert "measured on" in where and "ext4" in where and "tmpfs" in where
            # The prediction saves as files from the page itself: the document, and a row per candidate.
            saved = {}
            for label in ("JSON", "CSV"):
                with page.expect_download() as download:
                    page.click(f"p.downloads a:text-is('{label}')")
                saved[label] = Path(download.value.path()).read_text()
            document = json.loads(saved["JSON"])
            assert document["kind"] == "prediction" and len(document["candidates"]) == 2
            rows = saved["CSV"].splitlines()
            assert rows[0].startswith("candidate,runtime_s,low_s,high_s") and len(rows) == 3
            for chart in charts:
                assert chart["width"] > 300 and chart["height"] > 40 and chart["marks"] > 0, chart
            verdict = page.inner_text("section.verdict")
            assert verdict.startswith("Verdict") and "not been validated" in verdict
            observed = page.inner_text("section:has(svg[data-chart=observed])")
            assert "real run" in observed and "runtime vs real run" in observed

            phone, problems = _open(browser, report_file, {"width": 390, "height": 844})
            phone.screenshot(path=str(SCREENSHOTS / "report-phone.png"), full_page=True)
            assert problems == []
            # The page itself never scrolls sideways; wide charts and tables scroll in their own box.
            assert phone.evaluate("document.documentElement.scrollWidth") <= 390
            # The charts' text, scaled to the phone, is still text a person reads (it was 9 px).
            smallest = phone.evaluate("Math.min(...[...document.querySelectorAll('svg.chart text')]"
                                      ".map(t => t.getBoundingClientRect().height).filter(h => h > 0))")
            print(f"smallest chart text at 390 px: {smallest:.1f} px")
            assert smallest >= 10, smallest
            assert phone.evaluate("parseFloat(getComputedStyle(document.body).fontSize)") >= 14

            printed, problems = _open(browser, report_file, {"width": 800, "height": 1100}, media="print")
            printed.pdf(path=str(SCREENSHOTS / "report.pdf"))
            assert problems == [] and (SCREENSHOTS / "report.pdf").stat().st_size > 10_000
        finally:
            browser.close()
    print(f"screenshots: {SCREENSHOTS}")


def test_the_report_is_whole_on_its_own(report_file: Path) -> None:
    html = report_file.read_text()
    for outside in ("<script", "src=\"http", "href=\"http", "@import"):
        assert outside not in html
    assert not re.search(r"url\((?!#)", html)  # only references within the page (a chart's clip paths)
    assert json.dumps("Verdict")[1:-1] in html


def _candidate(name: str, fs_type: str, runtime: float, aging: str = "fresh") -> dict:
    return {"candidate": name, "runtime_s": runtime, "low_s": runtime * 0.9, "high_s": runtime * 1.1,
            "environment": {"fs_type": fs_type, "aging_state": aging}}


def test_the_verdict_says_time_saved_never_chooses_a_reference_and_marks_mixed_states() -> None:
    from fsbm.api.report import _verdict
    from fsbm.predictor.predict import _ranking

    entries = [_candidate("ram", "tmpfs", 1.0), _candidate("x", "xfs", 6.0, "aged (10 rounds)"),
               _candidate("e", "ext4", 4.0)]
    costs = {e["candidate"]: 0.02 for e in entries}
    prediction = {"candidates": entries, "ranking": _ranking(entries, "runtime_s", costs, 0.10)}
    assert prediction["ranking"]["best"] == "e" and prediction["ranking"]["references"] == ["ram"]
    html = _verdict(prediction, None)
    assert "Choose <b>e</b>" in html and "takes 33% less time</b> than x" in html  # 1 - 4/6, not "50% faster"
    assert "ram keeps nothing across a reboot" in html
    assert "x aged" in html and "e fresh" in html and "compare like with like" in html


def test_a_predictions_warnings_stand_under_the_verdict_escaped() -> None:
    from fsbm.api.report import _warnings

    assert _warnings({"warnings": []}) == "" and _warnings({}) == ""
    html = _warnings({"warnings": ["tracing ran unevenly <here>", "another"]})
    assert html.count('<p class="warning" role="note">') == 2 and "unevenly &lt;here&gt;." in html


def test_the_charts_are_inline_svg_with_titled_marks_one_colour_per_candidate() -> None:
    from fsbm.api.charts import IntervalBar, colours_for, interval_bars, log_lines, stacked_bars
    from fsbm.api.render import format_seconds

    colours = colours_for(["a", "b"])
    bars = interval_bars("runtime", [IntervalBar("a", 1.0, 0.9, 1.2, True, colours["a"]),
                                     IntervalBar("b", 2.0, 1.5, 2.5, False, colours["b"])], format_seconds, "d")
    lines = log_lines("sweep", [("a", [(1 << 20, 1.0), (1 << 30, 0.5)]), ("b", [(1 << 20, 2.0), (1 << 30, 1.0)])],
                      str, format_seconds, "d", colours=colours)
    stacked = stacked_bars("split", [("a", {"read": 1.0, "write": 0.5}), ("b", {"read": 2.0})], format_seconds, "d")
    for name, svg in (("runtime", bars), ("sweep", lines), ("split", stacked)):
        assert svg.startswith(f'<svg class="chart" data-chart="{name}" role="img"') and "viewBox" in svg
        assert not re.match(r"<svg[^>]* width=", svg)  # sized by the page, not in points
        assert svg.count('class="mark"><title>') == {"runtime": 2, "sweep": 2, "split": 3}[name]
    assert ">0<" in bars and ">0 ns<" not in bars  # the axis starts at a plain 0
    for candidate in ("a", "b"):  # the same colour in both charts
        assert colours[candidate].lower() in bars.lower() and colours[candidate].lower() in lines.lower()


def test_real_runs_kept_with_a_prediction_enter_its_verdict() -> None:
    from fsbm.api.report import _verdict
    from fsbm.predictor.predict import _ranking

    entries = [_candidate("x", "xfs", 3.0), _candidate("e", "ext4", 2.0)]
    prediction = {"candidates": entries,
                  "ranking": _ranking(entries, "runtime_s", {"x": 0.02, "e": 0.02}, 0.10)}
    runs = [{"candidate": "e", "kind": "real run", "compare_with": "runtime_s", "seconds": [2.6, 2.5, 2.7]},
            {"candidate": "x", "kind": "real run", "compare_with": "runtime_s", "seconds": [2.2, 2.1, 2.3]},
            {"candidate": "x", "kind": "replay", "compare_with": "fs_s", "seconds": [0.1]}]
    html = _verdict(prediction, None, runs)
    assert "Measured here (median of the real runs): x 2.2 s, e 2.6 s." in html
    assert "The runs disagree:</b> x was faster than e in every run; trust the runs." in html
    agreeing = _verdict(prediction, None, [{**runs[0], "seconds": [1.9]}, runs[1]])
    assert "The runs agree: e was faster than x." in agreeing
    # Runs whose ranges overlap cannot tell the two apart, whichever median came first.
    tied = _verdict(prediction, None, [{**runs[0], "seconds": [2.25, 2.3, 2.4]}, runs[1]])
    assert "The runs cannot tell e from x: x's median was 4% faster, but the ranges of their runs overlap." in tied
    assert "disagree" not in tied and "agree:" not in tied


@pytest.mark.slow(seconds=12)
def test_a_workload_alone_gets_a_report_of_its_own(served: Served, tmp_path: Path) -> None:
    """`fsbm report TRACE` without candidates: the workload's page (Darshan's job summary is the
    model), whole on its own, drawn in the browser without errors."""
    from tests.conftest import run_fsbm

    out = tmp_path / "workload.html"
    done = run_fsbm("report", str(served.log), "-o", str(out), env=served.env)
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert "does with its files" in html and "<script" not in html and 'src="http' not in html
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            page, problems = _open(browser, out, {"width": 390, "height": 844})
            charts = {c["name"]: c for c in page.evaluate(CHART_STATE)}
            page.screenshot(path=str(SCREENSHOTS / "workload-phone.png"), full_page=True)
            assert problems == []
            assert {"reuse", "request-sizes", "gaps"} <= set(charts), charts
            assert all(chart["marks"] > 0 for chart in charts.values())
            calls = page.inner_text("section:has(h2:text('Its calls'))")
            assert "read" in calls and "p99" in calls
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
        finally:
            browser.close()
    missing = run_fsbm("report", str(tmp_path / "nothing.strace"), "-o", str(tmp_path / "x.html"), env=served.env)
    assert missing.returncode == 2 and "neither a prediction id nor a file" in missing.stderr


def test_a_yardstick_neither_mixes_the_states_nor_wins_the_memory_sweep() -> None:
    from fsbm.api.report import _sweep_section, _verdict
    from fsbm.predictor.predict import _ranking

    # The demo's candidates: tmpfs as it is, the others aged alike.
    entries = [_candidate("ram", "tmpfs", 1.0), _candidate("x", "xfs", 6.0, "aged (8 rounds)"),
               _candidate("e", "ext4", 4.0, "aged (8 rounds)")]
    prediction = {"candidates": entries, "cache_bytes": 1 << 30,
                  "ranking": _ranking(entries, "runtime_s", {e["candidate"]: 0.02 for e in entries}, 0.10)}
    assert "compare like with like" not in _verdict(prediction, None)
    sizes = [1 << 20, 1 << 25, 1 << 30]
    sweep = {"ram": [(s, 1.0) for s in sizes], "x": [(s, 6.0) for s in sizes],
             "e": [(s, t) for s, t in zip(sizes, (7.0, 5.0, 4.0))]}
    said = _sweep_section(prediction, sweep)
    assert "The ranking (ram, a yardstick that keeps nothing across a reboot, left out) changes" in said, said
    assert "from 32 MiB, e overtakes x" in said, said
    steady = _sweep_section(prediction, {**sweep, "e": [(s, 4.0) for s in sizes]})
    assert "e is predicted fastest (ram, a yardstick" in steady and "ram is predicted" not in steady, steady


def test_the_costliest_calls_shown_are_those_of_the_two_the_verdict_weighs() -> None:
    from fsbm.api.report import _microbench_section
    from fsbm.predictor.predict import _ranking

    line = {"op": "read", "detail": "cold", "count": 1, "ns_each": 1.0, "total_ns": 1.0, "source": "fsbench"}
    entries = [{**_candidate(name, fs, t), "lines": [line]}
               for name, fs, t in (("ram", "tmpfs", 1.0), ("x", "xfs", 6.0), ("e", "ext4", 4.0), ("b", "btrfs", 9.0))]
    prediction = {"candidates": entries,
                  "ranking": _ranking(entries, "runtime_s", {e["candidate"]: 0.02 for e in entries}, 0.10)}
    html = _microbench_section(prediction, {})
    shown = re.findall(r"<h3>(\w+): the costliest classes of calls</h3>", html)
    assert shown == ["e", "x"], shown


def test_a_capture_that_reads_nothing_twice_gets_words_not_a_flat_curve() -> None:
    from fsbm.api.report import _profile_section

    profile = {"source": "capture", "tang": {"write_pct": 99.7, "writes_sequential_pct": 100.0},
               "namespace": {"files_touched": 2, "directories_touched": 0, "file_bytes_total": 100 << 20},
               "reuse": {"points": [{"cache_bytes": size, "hit_fraction": 0.0} for size in (4096, 1 << 20, 1 << 30)]}}
    html = _profile_section(profile)
    assert "reads no file data twice: no reuse curve" in html and "<svg" not in html
    assert "It touches 2 files, 100 MiB of file data." in html  # a capture names no directories


def test_the_terminal_and_the_report_state_the_same_ranking() -> None:
    """A plain log without timestamps and a runtime measured on ext4: the filesystem's time
    alone ranks xfs 13% faster, the measured runtime (the time outside included) 1%; both
    faces state the relative form's order."""
    from fsbm.api.render import ranking_sentence
    from fsbm.api.report import _ranked
    from fsbm.documents import Prediction, Ranking, verdict_field

    assert verdict_field(True, True, True) == "runtime_s" and verdict_field(False, True, True) == "relative_s"
    assert verdict_field(False, True, False) == "fs_s" and verdict_field(True, False, True) == "relative_s"
    by_fs = Ranking(order=["xfs", "ext4"], by="fs_s", best="xfs", runner_up="ext4", faster_by=0.15, saves=0.13,
                    confidence=0.62)
    by_relative = Ranking(order=["xfs", "ext4"], by="relative_s", best="xfs", runner_up="ext4", faster_by=0.008,
                          saves=0.008, confidence=0.52)
    prediction = Prediction.model_construct(absolute=False, ranking=by_fs, relative_ranking=by_relative,
                                            candidates=[])
    assert prediction.verdict_ranking is by_relative
    assert "xfs and ext4 are predicted within 1% of each other, xfs first: too close to call (confidence 52%)" \
        in ranking_sentence(prediction.verdict_ranking)
    assert "xfs is predicted to take 13% less time than ext4 (confidence 62%)" in ranking_sentence(by_fs)
    _, ranking, field = _ranked({"absolute": False, "ranking": by_fs.model_dump(),
                                 "relative_ranking": by_relative.model_dump(), "candidates": []})
    assert field == "relative_s" and ranking["by"] == "relative_s"


def test_the_verdict_quotes_the_validation_of_the_predictions_own_form(tmp_path: Path) -> None:
    """A capture's report quotes what `fsbm validate --capture` measured, a plain log's what
    `--plain` measured, the held-out test set's where there is one, and says so where only the
    development set was judged; a form no validation judged says it was not validated."""
    from fsbm.api import track_record
    from fsbm.api.report import _verdict
    from fsbm.api.track_record import FormRecord

    with ResultsStore(tmp_path / "store.sqlite") as store:
        track_record.save(store, "capture", "dev", 0.0, {"absolute": FormRecord(0.06, 0.24, 2, 2)})
        track_record.save(store, "capture", "test", 60.0, {"absolute": FormRecord(0.158, 0.459, 1, 4)})
        track_record.save(store, "plain", "dev", 0.0, {"absolute": FormRecord(0.178, 0.504, 16, 16)})
        capture = track_record.of_prediction(store, {"evidence": "capture"})
        plain = track_record.of_prediction(store, {"evidence": "trace"})
        relative = track_record.of_prediction(store, {"evidence": "trace", "relative_ranking": {"best": "e"}})
        # Both forms ranked, the verdict states the absolute order: its figures are the absolute form's.
        both = track_record.of_prediction(store, {"evidence": "capture", "absolute": True, "ranking": {"best": "e"},
                                                  "relative_ranking": {"best": "x"}})
        recorded = track_record.of_prediction(store, {"evidence": "recording"})
    assert capture is not None and capture.split == "test" and capture.page == "docs/validation-capture-test.md"
    assert both is not None and both.form == "absolute" and both.split == "test"
    assert plain is not None and plain.split == "dev" and relative is None and recorded is None
    prediction = {"candidates": [_candidate("e", "ext4", 4.0), _candidate("x", "xfs", 6.0)]}
    said = _verdict(prediction, capture)
    assert "Predictions from NFS captures (absolute form)" in said and "held-out test set" in said
    assert "median error 16% (largest 46%), and it ranked 1 of 4 pairs" in said
    assert "the development set (what the rules were chosen on" in _verdict(prediction, plain)
    assert "have not been validated on this machine" in _verdict(prediction, None)

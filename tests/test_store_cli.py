"""The store's contents listed, moved between stores, and compared (issue 36)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from fsbm.microbench.scratch import ScratchFs
from tests.conftest import run_fsbm, three_call_log

pytestmark = pytest.mark.cores_shared  # asserts nothing on a time it measures


def _bench(fs: ScratchFs) -> None:
    done = run_fsbm("bench", "--fs", fs.name, "--only", "stat_file,read", "--sizes", "512,4k,64k", "--caches", "warm",
                    "--reps", "2", "--files", "200", "--file-size", "4M")
    assert done.returncode == 0, done.stderr


@pytest.mark.slow(seconds=24)
def test_a_cost_table_exported_here_is_imported_elsewhere_and_compared(
        fsbm_home: Path, tmpfs_fs: ScratchFs, tmp_path: Path) -> None:
    _bench(tmpfs_fs)
    _bench(tmpfs_fs)
    listed = run_fsbm("store", "list", "tables", "--json", "-")
    assert listed.returncode == 0, listed.stderr
    tables = json.loads(listed.stdout)
    assert [t["name"] for t in tables] == ["tmpfs", "tmpfs"] and tables[0]["id"] > tables[1]["id"]

    # Two measurements of the same filesystem: every case in both, each ratio near 1.
    here = run_fsbm("compare", str(tables[1]["id"]), str(tables[0]["id"]), "--json", "-")
    assert here.returncode == 0, here.stderr
    cases = json.loads(here.stdout)["cases"]
    assert len(cases) >= 4 and all(c["b_over_a"] is not None and 0.2 < c["b_over_a"] < 5 for c in cases)

    exported = tmp_path / "tmpfs.table.json"
    done = run_fsbm("store", "export", str(tables[0]["id"]), "-o", str(exported))
    assert done.returncode == 0, done.stderr
    again = run_fsbm("store", "export", str(tables[0]["id"]), "-o", str(exported))
    assert again.returncode == 2 and "exists" in again.stderr  # never over what the user has

    other = {"FSBM_HOME": str(tmp_path / "other-home")}
    imported = run_fsbm("store", "import", str(exported), env=other)
    assert imported.returncode == 0, imported.stderr
    name = f"tmpfs@{socket.gethostname()}"
    assert name in imported.stdout
    run_fsbm("store", "import", str(exported), "--as", "tmpfs", env=other)
    # The same table on both sides: every ratio is exactly 1.
    same = run_fsbm("compare", "tmpfs", name, "--json", "-", env=other)
    assert same.returncode == 0, same.stderr
    body = json.loads(same.stdout)
    assert body["b_over_a_geometric_mean"] == 1.0 and {c["b_over_a"] for c in body["cases"]} == {1.0}
    # tmpfs lives in memory: every case is warm, the processor's alone.
    assert body["warm_cases"] == {"ratio": 1.0, "spread": 0.0, "cases": len(body["cases"])}
    shown = run_fsbm("compare", "tmpfs", name, env=other)
    assert shown.returncode == 0 and "warm cases, served from memory" in " ".join(shown.stdout.split())


def test_two_profiles_side_by_side(fsbm_home: Path, tmp_path: Path) -> None:
    sides = []
    for name, size in (("a", 3), ("b", 300)):
        log = three_call_log(tmp_path / f"{name}.strace", name, size)
        out = tmp_path / f"{name}.profile.json"
        assert run_fsbm("characterize", str(log), "--json", str(out)).returncode == 0
        sides.append(str(out))
    done = run_fsbm("compare", *sides, "--json", "-")
    assert done.returncode == 0, done.stderr
    rows = {r["statistic"]: (r["a"], r["b"]) for r in json.loads(done.stdout)["statistics"]}
    assert rows["read calls"] == ("33.3%", "33.3%")
    assert "two workload profiles" in done.stderr


def test_bad_kinds_and_bad_imports_are_clear_errors(fsbm_home: Path, tmp_path: Path) -> None:
    for args in (("store", "runs", "--kind", "nope"), ("store", "list", "nope")):
        done = run_fsbm(*args)
        assert done.returncode == 2 and "nope" in done.stderr and "Traceback" not in done.stderr, done.stderr
    broken = tmp_path / "broken.json"
    for text, expected in (("{", "is not JSON"), ('{"format": "x"}', "is not a file of `fsbm store export`"),
                           ('{"format": "fsbm-document", "version": 1, "kind": "cost_table", "body": '
                            '{"kind": "cost_table", "schema_version": 1}}', "broken.json")):
        broken.write_text(text)
        done = run_fsbm("store", "import", str(broken))
        assert done.returncode == 2 and expected in done.stderr and "Traceback" not in done.stderr, done.stderr
    log = three_call_log(tmp_path / "a.strace")
    profile = tmp_path / "a.profile.json"
    run_fsbm("characterize", str(log), "--json", str(profile))
    missing = run_fsbm("compare", str(profile), "no-such-thing")
    assert missing.returncode == 2 and "no-such-thing" in missing.stderr


def test_two_tables_compare_case_by_case_with_a_mix_of_file_sizes_a_case_of_its_own() -> None:
    """Cases are matched on everything that makes them the same case, a *_mix case's mix of
    file sizes included: two mixes of one mean are two rows."""
    from fsbm.api.compare import compare_tables
    from tests.test_predictor_model import entry, table

    a, b = table("btrfs"), table("btrfs", scale=2.0)
    mixes = ([500, 9000, 60_500], [20_000, 20_000, 30_000])
    a.entries += [entry("create_written_mix", "creation", "warm", 23_333, 300_000, file_sizes=m) for m in mixes]
    b.entries.append(entry("create_written_mix", "creation", "warm", 23_333, 450_000, file_sizes=mixes[0]))
    rows = {(r.bench, r.file_sizes): r for r in compare_tables(a, b) if r.bench == "create_written_mix"}
    assert rows[("create_written_mix", (500, 9000, 60_500))].ratio == 1.5
    assert rows[("create_written_mix", (20_000, 20_000, 30_000))].b_ns is None
    assert all(r.ratio == 2.0 for r in compare_tables(a, b) if r.bench == "stat_file")


def test_a_case_measured_unpinned_is_a_row_of_its_own_and_says_so() -> None:
    """The same unlinks measured pinned in one table and unpinned in the other are two cases,
    and the table of the comparison says which row was measured unpinned."""
    from rich.console import Console

    from fsbm.api import render
    from fsbm.api.compare import compare_tables
    from fsbm.predictor.cost_table import UNPINNED, CostTable
    from tests.test_predictor_model import entry, table

    a, b = table("xfs"), table("xfs")
    a.entries.append(entry("unlink", "creation", "cold", None, 20_000.0, files=24_000))
    b.entries.append(entry("unlink", "creation", "cold", None, 30_000.0, files=24_000, placement=UNPINNED))
    rows = [r for r in compare_tables(a, b) if r.files == 24_000]
    assert sorted((r.placement, r.a_ns, r.b_ns) for r in rows) == [("pinned", 20_000.0, None),
                                                                  (UNPINNED, None, 30_000.0)]
    console = Console(width=200, record=True)
    console.print(render.cost_table_comparison(rows, "a", "b", None))
    shown = console.export_text()
    assert "among 24000 files, unpinned" in shown and shown.count("unpinned") == 1
    emptied = [entry("unlink_entries", "creation", "cold", None, 50_000.0, files=5_000, placement=UNPINNED)]
    console.print(render.cost_table_comparison(compare_tables(table("xfs"), CostTable(
        "xfs", b.environment, "t", b.entries + emptied)), "a", "b", None))
    assert "in directories of 5000 entries, unpinned" in console.export_text()

"""Stored cost tables reused by `fsbm demo`: only at the effort asked for, on a real tmpfs
scratch filesystem measured by the real fsbench."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from fsbm.api.commands.common import Settings
from fsbm.api.provision import measure_cost_table, measured_elsewhere, provision, stored_or_measured_cost_table
from fsbm.microbench import scratch
from fsbm.microbench.fsbench import QUICK_CASE_SECONDS, QUICK_REPS, TableEffort
from fsbm.store import ResultsStore
from fsbm.predictor.cost_table import CostTable
from tests.conftest import QUICK_TABLE_EFFORT, require_root

pytestmark = pytest.mark.cores_shared  # asserts nothing on a time it measures


@pytest.mark.slow(seconds=11)
def test_a_stored_table_stands_in_only_for_an_effort_it_measured(fsbm_home: Path,
                                                                 tmpfs_fs: scratch.ScratchFs) -> None:
    quick_test = TableEffort(*QUICK_TABLE_EFFORT)
    console = Console(record=True, width=200)
    with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
        first = measure_cost_table(None, tmpfs_fs, store, effort=quick_test)
        assert store.run_config(first.fsbench_run_id)["reps"] == QUICK_TABLE_EFFORT[0]

        # Less effort, or the same: the stored table is the one returned, and nothing is measured.
        for less in (quick_test, TableEffort(1, QUICK_TABLE_EFFORT[1] / 2)):
            again = stored_or_measured_cost_table(None, tmpfs_fs, store, console, effort=less)
            assert again.fsbench_run_id == first.fsbench_run_id
        assert len(store.documents("cost_table", name=tmpfs_fs.name)) == 1

        # Longer cases than it measured: measured again, at the effort asked, and said why.
        longer = TableEffort(QUICK_TABLE_EFFORT[0], QUICK_TABLE_EFFORT[1] * 2)
        measured = stored_or_measured_cost_table(None, tmpfs_fs, store, console, effort=longer)
        assert measured.fsbench_run_id != first.fsbench_run_id
        assert store.run_config(measured.fsbench_run_id)["case_seconds"] == longer.case_seconds
        told = console.export_text()
        assert "is not reused" in told and "less than the 2 of 0.04 s asked for" in told

    # Quick's own effort (checked against fsbench's in test_fsbench_arguments) where none is given.
    assert TableEffort().resolved == (QUICK_REPS, QUICK_CASE_SECONDS)
    assert TableEffort().shortfall({"reps": QUICK_REPS, "case_seconds": QUICK_CASE_SECONDS}) is None
    assert "recorded no effort" in TableEffort().shortfall({})


def test_an_image_of_another_size_is_made_again_and_its_tables_are_not_taken(fsbm_home: Path) -> None:
    """A validation image kept at another size than asked is another candidate (on btrfs, the
    unallocated space decides whether syncs commit): provision makes it again at the size
    asked, and tables measured on the old one are told apart from its own."""
    require_root()
    settings = Settings(None, fsbm_home / "scratch")
    console = Console(record=True, width=200)
    small = provision(settings, "val-tmpfs", "tmpfs", 64 << 20, None, console)
    try:
        (small.mount_point / "staged.bin").write_bytes(b"x" * 4096)
        assert provision(settings, "val-tmpfs", "tmpfs", 64 << 20, None, console).size_bytes == 64 << 20
        assert (small.mount_point / "staged.bin").exists()  # the same size: kept as it was

        table = CostTable("val-tmpfs", {"fs_size_bytes": 64 << 20}, "2026-12-06T00:00:00+00:00", [])
        assert measured_elsewhere([table], small.mount_point) is None
        larger = provision(settings, "val-tmpfs", "tmpfs", 128 << 20, None, console)
        assert larger.size_bytes == 128 << 20 and not (larger.mount_point / "staged.bin").exists()
        assert "val-tmpfs: made again at 128 MiB (it was 64 MiB)" in console.export_text()
        assert measured_elsewhere([table], larger.mount_point) == "a 64 MiB filesystem"
    finally:
        scratch.destroy("val-tmpfs", fsbm_home / "scratch")

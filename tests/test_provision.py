"""Stored cost tables reused by `fsbm demo`: only at the effort asked for, on a real tmpfs
scratch filesystem measured by the real fsbench."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from fsbm.api.provision import measure_cost_table, stored_or_measured_cost_table
from fsbm.microbench import scratch
from fsbm.microbench.fsbench import QUICK_CASE_SECONDS, QUICK_REPS, TableEffort
from fsbm.store import ResultsStore
from tests.conftest import QUICK_TABLE_EFFORT

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

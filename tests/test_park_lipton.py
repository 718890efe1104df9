"""Park and Lipton's t = S + ceil(b/d)*D + C*b (+ R for partial overwrites), fitted."""

from __future__ import annotations

import math
import random

import pytest

from fsbm.errors import UsageError
from fsbm.predictor import CostTable, fit

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

SIZES = [512, 1024, 2048, 4095, 4096, 4097, 8192, 16384, 65536, 262144, 1048576]


def synthetic(s: float, d: float, c: float, r: float = 0.0, noise: float = 0.01, block: int = 4096,
              reps: int = 5) -> list[tuple[int, float]]:
    rng = random.Random(42)
    points = []
    for b in SIZES:
        t = s + math.ceil(b / block) * d + c * b + (r if b % block else 0.0)
        points += [(b, t * (1 + rng.gauss(0, noise))) for _ in range(reps)]
    return points


def test_known_parameters_are_recovered_within_their_intervals() -> None:
    f = fit("read", "read", "random", "cold", 4096, synthetic(80_000, 20_000, 0.5))
    assert f is not None and not f.omitted
    for term, true in (("S", 80_000), ("D", 20_000), ("C", 0.5)):
        e = f.params[term]
        assert e.ci95_low <= true <= e.ci95_high, (term, e)
    assert f.r_squared > 0.99


def test_the_read_modify_write_term_is_fitted_for_overwrites() -> None:
    f = fit("overwrite", "write", "random", "cold", 4096, synthetic(5_000, 3_000, 0.3, r=70_000))
    assert f is not None
    assert f.params["R"].ci95_low <= 70_000 <= f.params["R"].ci95_high
    assert f.predict_ns(2048) > f.predict_ns(4096)


def test_a_term_the_sizes_cannot_separate_is_omitted_not_invented() -> None:
    points = [(b, t) for b, t in synthetic(1_000, 2_000, 0.1) if b < 4096]
    f = fit("read", "read", "random", "warm", 4096, points)
    assert f is not None
    assert "D" in f.omitted and "D" not in f.params


def test_fewer_than_three_sizes_cannot_be_fitted() -> None:
    assert fit("read", "read", "random", "warm", 4096, [(4096, 1.0), (8192, 2.0)]) is None


def test_cost_tables_round_trip_through_json() -> None:
    doc = {
        "environment": {"fs_type": "ext4"}, "finished": "2026-01-01T00:00:00Z",
        "results": [
            {"bench": "read", "family": "data", "op": "read", "size": b, "order": "random", "cache": "cold",
             "block_size": 4096, "ops": 10, "latency_ns": {"p50": t, "mean": t}, "histogram_log2": [],
             "bimodal": False, "partial_block": b % 4096 != 0, "rep_means_ns": [t, t * 1.01]}
            for b, t in [(512, 80e3), (4096, 82e3), (65536, 150e3), (1048576, 900e3)]
        ],
    }
    table = CostTable.from_fsbench(doc, "ext4")
    again = CostTable.from_json(table.to_json())
    assert again.to_json() == table.to_json()
    assert again.fit_for("read", "random", "cold") is not None
    assert again.entry("read", "random", "cold", 4096).latency_ns.p50 == 82e3


def test_a_document_that_is_not_a_cost_table_is_refused() -> None:
    with pytest.raises(UsageError, match="not an fsbm cost table"):
        CostTable.from_json({"kind": "profile", "schema_version": 1})


def test_on_tmpfs_cold_costs_are_the_warm_costs() -> None:
    warm = {"bench": "read", "op": "read", "size": 4096, "order": "random", "cache": "warm", "ops": 1,
            "latency_ns": {"p50": 1000, "mean": 1000.0}, "histogram_log2": [], "bimodal": False}
    table = CostTable("tmpfs", {"fs_type": "tmpfs"}, "now", [warm])
    assert table.entry("read", "random", "cold", 4096) == table.entries[0] and table.entries[0].cache == "warm"
    disk = CostTable("ext4", {"fs_type": "ext4"}, "now", [warm])
    assert disk.entry("read", "random", "cold", 4096) is None

"""Numbers as people read them, the same in every document."""

from __future__ import annotations

import pytest

from fsbm.units import percent, to_figures

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared


def test_a_fraction_is_written_as_a_percentage_and_nothing_measured_as_a_dash() -> None:
    assert percent(0.25) == "25%"
    assert percent(0.031, signed=True) == "+3%" and percent(-0.4, signed=True) == "-40%"
    assert percent(0.1234, digits=1) == "12.3%"
    assert percent(None) == percent(float("nan"), signed=True) == "-"


def test_a_count_is_rounded_to_its_significant_figures() -> None:
    assert [to_figures(n, 2) for n in (17_612, 23_738, 590, 7)] == [18_000, 24_000, 590, 7]
    assert to_figures(37_901.4, 3) == 37_900

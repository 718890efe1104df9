"""The targets every judge holds the predictor to (predictor/targets.py)."""

from __future__ import annotations

import pytest

from fsbm.predictor.targets import TARGETS, ErrorBound, form_bound, targets_sentence

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared


def test_a_bound_is_met_by_errors_within_it_and_by_errors_not_measured() -> None:
    bound = ErrorBound(median=0.10, largest=0.25)
    assert bound.met(0.10, 0.25) and bound.met(None, None) and bound.met(0.05, None)
    assert not bound.met(0.11, 0.2) and not bound.met(0.05, 0.26)


def test_a_plain_traces_forms_take_the_relative_or_the_absolute_bound() -> None:
    assert form_bound("relative") is TARGETS.relative
    assert form_bound("absolute") is form_bound("untimed") is TARGETS.absolute
    assert TARGETS.relative.median < TARGETS.absolute.median and TARGETS.relative.largest < TARGETS.absolute.largest


def test_the_targets_read_as_issue_35_states_them() -> None:
    assert targets_sentence(TARGETS) == ("relative form median <= 10%, largest <= 25%, for runtimes and ratios; "
                                         "absolute forms median <= 20%, largest <= 50%; intervals covering >= 85%")

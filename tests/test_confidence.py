"""How sure a verdict is, and how a validation judges such confidences."""

import math

import pytest

from fsbm.predictor.confidence import cost_log_sd, order_confidence, reliability
from fsbm.predictor.predict import _ranking

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared


def test_a_verdict_is_as_sure_as_the_predicted_ratio_stands_out_from_its_spread() -> None:
    # A ratio of e^0.1 against a spread of 0.1 is one standard deviation: 84%.
    assert order_confidence(1.0, math.exp(0.1), [0.06, 0.08]) == pytest.approx(0.8413, abs=1e-4)
    assert order_confidence(1.0, 1.0, [0.1]) == pytest.approx(0.5)
    # More spread, less sure; a larger ratio, surer.
    assert order_confidence(1.0, 1.2, [0.3]) < order_confidence(1.0, 1.2, [0.1]) < order_confidence(1.0, 1.5, [0.1])
    # Nothing known of a runtime says nothing of the order.
    assert order_confidence(0.0, 1.0, [0.1]) == 0.5


def test_the_costs_spread_is_a_share_of_the_runtime_scaled_as_the_model_scaled_the_time() -> None:
    half = 1.959964  # the 95% interval's half width in standard deviations
    assert cost_log_sd(0.8, 1.2, 1.0, 4.0) == pytest.approx(0.4 / (2 * half) / 4.0, rel=1e-5)
    assert cost_log_sd(0.8, 1.2, 2.0, 4.0) == pytest.approx(2 * cost_log_sd(0.8, 1.2, 1.0, 4.0))
    assert cost_log_sd(0.8, 1.2, 1.0, 0.0) == 0.0


def test_predict_states_its_verdict_with_the_same_function() -> None:
    entries = [{"candidate": "xfs", "runtime_s": 1.3, "environment": {"fs_type": "xfs"}},
               {"candidate": "ext4", "runtime_s": 1.0, "environment": {"fs_type": "ext4"}},
               {"candidate": "tmpfs", "runtime_s": 0.2, "environment": {"fs_type": "tmpfs"}}]
    spreads = {"ext4": 0.05, "xfs": 0.07, "tmpfs": 0.01}
    ranking = _ranking(entries, "runtime_s", spreads, 0.1)
    # tmpfs is a yardstick, not a choice: the verdict is between ext4 and xfs.
    assert (ranking["best"], ranking["runner_up"]) == ("ext4", "xfs")
    assert ranking["confidence"] == pytest.approx(order_confidence(1.0, 1.3, [0.1, 0.05, 0.07]))


def test_reliability_counts_each_bin_and_what_the_confidences_expect() -> None:
    confidences = [0.55, 0.6, 0.85, 0.92, 0.97, 0.99]
    right = [False, True, True, True, True, False]
    r = reliability(confidences, right)
    assert (r.pairs, r.right) == (6, 4)
    assert r.expected_right == pytest.approx(sum(confidences))
    assert [(b.low, b.pairs, b.right) for b in r.bins] == [(0.5, 2, 1), (0.8, 1, 1), (0.9, 1, 1), (0.95, 2, 1)]
    assert r.bins[-1].mean_confidence == pytest.approx(0.98)
    sure = r.sure
    assert sure is not None and (sure.pairs, sure.right) == (3, 2)
    assert sure.mean_confidence == pytest.approx((0.92 + 0.97 + 0.99) / 3)
    expected_brier = sum((c - r_) ** 2 for c, r_ in zip(confidences, right)) / 6
    assert r.brier == pytest.approx(expected_brier)
    # A verdict sure and right every time scores 0; coin flips 0.25.
    assert reliability([1.0, 1.0], [True, True]).brier == 0.0
    assert reliability([0.5, 0.5], [True, False]).brier == pytest.approx(0.25)
    assert reliability([], []).sure is None

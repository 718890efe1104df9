"""The predictor: what each call costs on a candidate (cost_table, pricing, park_lipton), the
count x cost model of a workload's filesystem time (model), the time outside the filesystem
(outside for recordings, tracing for plain traces), the one runtime formula as a fitted
estimator (estimator), predictions (predict.predict), and the suite that validates them (suite,
validate, judge, plain_judge)."""

from importlib import import_module
from typing import Any

# Each public name and the module that defines it, imported on first use: the command line
# imports a module of this package to do one thing, and should not pay for all the others.
_WHERE = {"CostTable": "cost_table", "Estimate": "park_lipton", "ParkLiptonFit": "park_lipton", "fit": "park_lipton",
          "fit_fsbench_results": "park_lipton", "Pricer": "pricing", "RuntimeEstimator": "estimator",
          "runtime_seconds": "estimator", "price_workload": "model", "Workload": "predict"}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'fsbm.predictor' has no attribute {name!r}")
    return getattr(import_module(f"fsbm.predictor.{_WHERE[name]}"), name)

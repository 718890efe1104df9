"""The predictor: cost tables, the cost model, fitting, calibration and validation."""

from fsbm.predictor.cost_table import CostTable
from fsbm.predictor.park_lipton import Estimate, ParkLiptonFit, fit, fit_fsbench_results

__all__ = ["CostTable", "Estimate", "ParkLiptonFit", "fit", "fit_fsbench_results"]

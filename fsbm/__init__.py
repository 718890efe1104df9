"""fsbm: filesystem workload characterizer and runtime predictor.

The package maps the repository's top-level folders onto import names (DESIGN.md):
``fsbm.microbench``, ``fsbm.traces``, ``fsbm.characterizer``, ``fsbm.predictor``,
``fsbm.api``.  This root package holds what every part shares: errors, locations and
the results store, and the pipeline a notebook calls (fsbm/pipeline.py): ``fsbm.parse``,
``fsbm.characterize``, ``fsbm.predict``, ``fsbm.cost_table`` and ``fsbm.replay``.
"""

from typing import Any

from fsbm.errors import FsbmError, UsageError
from fsbm.store import ResultsStore

__version__ = "0.1.0"
__all__ = ["FsbmError", "UsageError", "ResultsStore", "__version__", "parse", "characterize", "predict",
           "cost_table", "replay"]
_PIPELINE = ("parse", "characterize", "predict", "cost_table", "replay")


def __getattr__(name: str) -> Any:
    """The pipeline's functions (fsbm/pipeline.py), loaded when first used: the command line
    starts without pandas."""
    if name in _PIPELINE:
        from fsbm import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'fsbm' has no attribute {name!r}")

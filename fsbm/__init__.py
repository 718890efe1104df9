"""fsbm: filesystem workload characterizer and runtime predictor.

The package maps the repository's top-level folders onto import names (DESIGN.md):
``fsbm.microbench``, ``fsbm.traces``, ``fsbm.characterizer``, ``fsbm.predictor``,
``fsbm.api``.  This root package holds what every part shares: errors, locations and
the results store.
"""

from fsbm.errors import FsbmError, UsageError
from fsbm.store import ResultsStore

__version__ = "0.1.0"
__all__ = ["FsbmError", "UsageError", "ResultsStore", "__version__"]

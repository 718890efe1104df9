"""The workload profile: what the predictor needs and what a person reads (issue 4).

A plain JSON document with a schema_version, so profiles can be kept, compared, stored
and sent to the API.  ``Profile`` wraps it with the accessors other parts use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsbm.errors import UsageError

# 2: nearest-rank percentiles (they merge exactly); concurrency as calls in flight per window.
# 3: event classes, the trace's time outside the priced calls, the recording's CPU time, a scope.
SCHEMA_VERSION = 3


@dataclass
class Profile:
    body: dict[str, Any]

    @property
    def tang(self) -> dict[str, float]:
        return self.body["tang"]

    def to_json(self) -> dict[str, Any]:
        return self.body

    def to_frame(self) -> Any:
        """One row per operation: how many calls, how many failed, the bytes moved (reads and
        writes) and each one's share of the calls."""
        import pandas as pd

        operations = self.body["operations"]
        total = sum(entry.get("count", 0) for entry in operations.values()) or 1
        frame = pd.DataFrame([{"operation": op, "count": entry.get("count", 0), "failed": entry.get("failed", 0),
                               "bytes": entry.get("bytes"), "share_of_calls": entry.get("count", 0) / total}
                              for op, entry in operations.items()])
        return frame.sort_values("count", ascending=False, kind="stable").set_index("operation")

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.body, indent=1))

    @classmethod
    def from_json(cls, body: dict[str, Any], source: str = "profile") -> "Profile":
        """A profile from its JSON: as `fsbm characterize --json` writes it, or as `fsbm store
        export` wraps a stored one (its body is the profile)."""
        from fsbm.store import EXPORT_FORMAT

        if body.get("format") == EXPORT_FORMAT:
            if body.get("kind") != "profile":
                raise UsageError(f"{source} is an exported {body.get('kind')}, not a workload profile",
                                 hint="export a profile (`fsbm store list profiles` names them)")
            body = body.get("body") or {}
        if body.get("kind") != "profile":
            raise UsageError(f"{source} is not an fsbm workload profile (kind={body.get('kind')!r})")
        if body.get("schema_version") != SCHEMA_VERSION:
            raise UsageError(f"{source} has schema_version {body.get('schema_version')}; "
                             f"this fsbm reads {SCHEMA_VERSION}")
        return cls(body)

    @classmethod
    def load(cls, path: Path) -> "Profile":
        try:
            return cls.from_json(json.loads(Path(path).read_text()), str(path))
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
        except ValueError as exc:
            raise UsageError(f"{path} is not JSON: {exc}") from exc
